/* The producer's per-Interest work, compiled: see ndnsci/ndn/producer.py (Producer._answer).
 *
 * serve() frames the packets in the face's receive buffer and answers, for each Interest for a
 * segment of a file the producer has open (Producer._segment_fast: `<versioned name>/seg=<n>`,
 * checked within RECHECK_SECONDS, in range), with the segment's Data signed with DigestSha256,
 * wrapped in an LpPacket that echoes NDNd's PIT token. The content is read with pread straight
 * into the reply. Everything else (metadata, listings, Nacks, unknown names, LpPackets of any
 * other shape, files due for a re-check, read errors) is handed back to Python as the frame
 * Face.packets() would give, so both paths take every decision that is not per packet the same
 * way; tests/ndn/test_ndn_serveloop.py checks that their replies are byte for byte the same.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "_tlv.h"

#define T_LP_PACKET 0x64
#define T_LP_PIT_TOKEN 0x62
#define T_LP_FRAGMENT 0x50
#define T_INTEREST 0x05
#define T_DATA 0x06
#define T_NAME 0x07
#define T_CONTENT 0x15
#define T_SEGMENT 0x32
#define MAX_FRAME 0x10000 /* a longer packet: the stream is out of sync (tlv.frame_packets) */
/* room for one reply's headers and name: a Data's length fits two bytes (digest_packet's) and
 * an LpPacket header with a PIT token is at most ~270 bytes; the content is read past it */
#define MAX_REPLY (0x10000 + 512)

static const uint8_t DIGEST_TAIL[] = {0x16, 0x03, 0x1b, 0x01, 0x00, 0x17, 0x20};
#define SIGNATURE_INFO_SIZE 5

static PyObject *s_fd, *s_payload, *s_segment_size, *s_last_segment, *s_meta, *s_checked,
    *s_digest;

/* writes a TLV type or length; returns its size */
static int put_varnum(uint8_t *p, uint64_t v) {
    if (v < 253) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v <= 0xffff) {
        p[0] = 253;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)v;
        return 3;
    }
    p[0] = 254;
    for (int i = 0; i < 4; i++) p[1 + i] = (uint8_t)(v >> (24 - 8 * i));
    return 5;
}

static int varnum_size(uint64_t v) { return v < 253 ? 1 : v <= 0xffff ? 3 : 5; }

static int get_long(PyObject *obj, PyObject *attr, long long *out) {
    PyObject *v = PyObject_GetAttr(obj, attr);
    if (v == NULL) return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* The reply to one Interest at [interest, end) of the buffer, appended to `out` at *used.
 * Returns 1 when answered, 0 when Python must look at it, -1 on a Python error. */
static int answer(const uint8_t *interest, const uint8_t *end, const uint8_t *token,
                  Py_ssize_t token_len, PyObject *objects, double now, double recheck,
                  PyObject *sha256, PyObject *out, Py_ssize_t *used) {
    uint64_t ignored, name_len;
    const uint8_t *p = varnum(interest + 1, end, &ignored); /* the Interest's length */
    if (p == NULL || p >= end || *p != T_NAME) return 0;
    const uint8_t *name_start = varnum(p + 1, end, &name_len);
    if (name_start == NULL || name_len > (uint64_t)(end - name_start)) return 0;
    const uint8_t *name_end = name_start + name_len, *head = NULL;
    for (int width = 1; width <= 8; width *= 2) {
        const uint8_t *h = name_end - width - 2;
        if (h > name_start && h[0] == T_SEGMENT && h[1] == width) {
            head = h;
            break;
        }
    }
    if (head == NULL) return 0;
    PyObject *key = PyBytes_FromStringAndSize((const char *)name_start, head - name_start);
    if (key == NULL) return -1;
    PyObject *obj = PyDict_GetItemWithError(objects, key); /* borrowed */
    Py_DECREF(key);
    if (obj == NULL) return PyErr_Occurred() ? -1 : 0;
    Py_INCREF(obj);
    int rc = -1;
    PyObject *meta = NULL, *payload = NULL, *checked = NULL;
    long long last, segment_size, fd;
    uint64_t seg = 0;
    for (const uint8_t *b = head + 2; b < name_end; b++) seg = (seg << 8) | *b;
    if (get_long(obj, s_last_segment, &last) < 0) goto done;
    if ((checked = PyObject_GetAttr(obj, s_checked)) == NULL) goto done;
    double checked_at = PyFloat_AsDouble(checked);
    if (checked_at == -1.0 && PyErr_Occurred()) goto done;
    rc = 0; /* from here on, anything unusual is Python's */
    if (seg > (uint64_t)last || now - checked_at > recheck) goto done;
    if ((payload = PyObject_GetAttr(obj, s_payload)) == NULL) goto error;
    if (payload != Py_None) goto done; /* a listing, served from memory */
    PyObject *fdobj = PyObject_GetAttr(obj, s_fd);
    if (fdobj == NULL) goto error;
    int has_fd = fdobj != Py_None;
    fd = has_fd ? PyLong_AsLongLong(fdobj) : -1;
    Py_DECREF(fdobj);
    if (fd == -1 && PyErr_Occurred()) goto error;
    if (!has_fd) goto done;
    if (get_long(obj, s_segment_size, &segment_size) < 0) goto error;
    if ((meta = PyObject_GetAttr(obj, s_meta)) == NULL) goto error;
    if (!PyBytes_Check(meta) || segment_size <= 0 || segment_size > 0xffff) goto done;

    Py_ssize_t name_tlv = name_end - p, meta_len = PyBytes_GET_SIZE(meta);
    if (PyByteArray_GET_SIZE(out) < *used + MAX_REPLY + segment_size &&
        PyByteArray_Resize(out, 2 * (*used + MAX_REPLY + segment_size)) < 0)
        goto error;
    /* the content first, into a spare area past the widest reply's headers, then moved to
     * its place once the lengths before it are known */
    uint8_t *base = (uint8_t *)PyByteArray_AS_STRING(out) + *used;
    uint8_t *spare = base + MAX_REPLY;
    ssize_t n;
    do {
        n = pread((int)fd, spare, (size_t)segment_size, (off_t)(seg * (uint64_t)segment_size));
    } while (n < 0 && errno == EINTR);
    if (n < 0) goto done; /* Python reads it again and raises what os.pread raises */
    uint64_t size = name_tlv + meta_len + 1 + varnum_size(n) + n + 39;
    if (size > 0xffff) goto done; /* digest_packet's two-byte length: Python's problem */
    uint64_t packet = 1 + varnum_size(size) + size;
    uint8_t *q = base;
    if (token != NULL) {
        uint64_t value = 1 + varnum_size(token_len) + token_len + 1 + varnum_size(packet);
        *q++ = T_LP_PACKET;
        q += put_varnum(q, value + packet);
        *q++ = T_LP_PIT_TOKEN;
        q += put_varnum(q, token_len);
        memcpy(q, token, token_len);
        q += token_len;
        *q++ = T_LP_FRAGMENT;
        q += put_varnum(q, packet);
    }
    *q++ = T_DATA;
    q += put_varnum(q, size);
    uint8_t *signed_start = q;
    memcpy(q, p, name_tlv);
    q += name_tlv;
    memcpy(q, PyBytes_AS_STRING(meta), meta_len);
    q += meta_len;
    *q++ = T_CONTENT;
    q += put_varnum(q, n);
    memmove(q, spare, n);
    q += n;
    memcpy(q, DIGEST_TAIL, sizeof(DIGEST_TAIL)); /* SignatureInfo, then SignatureValue's TL */
    PyObject *mv = PyMemoryView_FromMemory((char *)signed_start,
                                           q + SIGNATURE_INFO_SIZE - signed_start, PyBUF_READ);
    if (mv == NULL) goto error;
    PyObject *h = PyObject_CallOneArg(sha256, mv);
    Py_DECREF(mv);
    PyObject *d = h ? PyObject_CallMethodNoArgs(h, s_digest) : NULL;
    Py_XDECREF(h);
    if (d == NULL) goto error;
    if (!PyBytes_Check(d) || PyBytes_GET_SIZE(d) != 32) {
        Py_DECREF(d);
        PyErr_SetString(PyExc_ValueError, "the digest is not 32 bytes");
        goto error;
    }
    q += sizeof(DIGEST_TAIL); /* `out` was not resized since `base` was taken */
    memcpy(q, PyBytes_AS_STRING(d), 32);
    Py_DECREF(d);
    q += 32;
    *used += q - base;
    rc = 1;
    goto done;
error:
    rc = -1;
done:
    Py_XDECREF(meta);
    Py_XDECREF(payload);
    Py_XDECREF(checked);
    Py_DECREF(obj);
    return rc;
}

static PyObject *serve(PyObject *self, PyObject *args) {
    PyObject *buf, *objects, *sha256;
    Py_ssize_t start, end, max_replies;
    double now, recheck;
    if (!PyArg_ParseTuple(args, "O!nnO!ddOn", &PyByteArray_Type, &buf, &start, &end,
                          &PyDict_Type, &objects, &now, &recheck, &sha256, &max_replies))
        return NULL;
    if (start < 0 || end > PyByteArray_GET_SIZE(buf) || start > end) {
        PyErr_SetString(PyExc_ValueError, "start and end must lie within the buffer");
        return NULL;
    }
    PyObject *out = PyByteArray_FromStringAndSize(NULL, 0);
    PyObject *slow = PyList_New(0);
    if (out == NULL || slow == NULL) goto fail;
    Py_ssize_t used = 0, answered = 0;
    int more = 0, odd = 0;
    const uint8_t *base = (const uint8_t *)PyByteArray_AS_STRING(buf);
    const uint8_t *pos = base + start, *limit = base + end;
    while (pos < limit) {
        if (answered >= max_replies) {
            more = 1;
            break;
        }
        uint64_t typ, len;
        const uint8_t *v = varnum(pos, limit, &typ);
        if (v == NULL || (v = varnum(v, limit, &len)) == NULL) break; /* incomplete */
        if (len > MAX_FRAME) {
            odd = 1; /* Python's framing raises its TlvError */
            break;
        }
        if (len > (uint64_t)(limit - v)) break;
        const uint8_t *pend = v + len, *interest = pos, *token = NULL;
        Py_ssize_t token_len = 0;
        int fast = 1;
        if (typ == T_LP_PACKET) {
            /* NDNd's usual shape: 64 LL 62 LL <token> 50 LL <Interest> */
            fast = 0;
            if (pend - v >= 2 && v[0] == T_LP_PIT_TOKEN && v[1] < 253) {
                const uint8_t *t_end = v + 2 + v[1];
                if (pend - t_end >= 2 && t_end[0] == T_LP_FRAGMENT && t_end[1] < 253) {
                    token = v + 2;
                    token_len = v[1];
                    interest = t_end + 2;
                    fast = 1;
                }
            }
        }
        int r = 0;
        if (fast && interest < pend && *interest == T_INTEREST)
            r = answer(interest, pend, token, token_len, objects, now, recheck, sha256, out,
                       &used);
        if (r < 0) goto fail;
        if (r > 0) {
            answered += 1;
        } else {
            PyObject *frame = Py_BuildValue("(Knnn)", (unsigned long long)typ, pos - base,
                                            v - base, pend - base);
            if (frame == NULL || PyList_Append(slow, frame) < 0) {
                Py_XDECREF(frame);
                goto fail;
            }
            Py_DECREF(frame);
        }
        /* answer() may have resized `out`, never `buf` */
        pos = pend;
    }
    if (PyByteArray_Resize(out, used) < 0) goto fail;
    return Py_BuildValue("(nNNnii)", pos - base, out, slow, answered, more, odd);
fail:
    Py_XDECREF(out);
    Py_XDECREF(slow);
    return NULL;
}

static PyMethodDef serveloop_methods[] = {
    {"serve", serve, METH_VARARGS,
     "serve(buf, start, end, objects, now, recheck, sha256, max_replies) -> (offset, replies, "
     "frames for Python, answered, more, odd)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef serveloop_module = {
    PyModuleDef_HEAD_INIT, "_serveloop", "The producer's compiled loop.", -1, serveloop_methods,
};

PyMODINIT_FUNC PyInit__serveloop(void) {
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {
        {&s_fd, "fd"},       {&s_payload, "payload"}, {&s_segment_size, "segment_size"},
        {&s_meta, "meta"},   {&s_checked, "checked"}, {&s_last_segment, "last_segment"},
        {&s_digest, "digest"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if ((*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL) return NULL;
    }
    return PyModule_Create(&serveloop_module);
}
