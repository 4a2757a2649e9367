/* The consumer's per-packet work, compiled: see ndnsci/ndn/consumer.py (class Transfer).
 *
 * Core.receive() frames the packets in the face's receive buffer and, for each Data segment,
 * checks its name, MetaInfo, DigestSha256 and size, writes its content with pwrite (or hands it
 * to the transfer's own _write hook) and does the bookkeeping of Transfer._stored. Core.send()
 * builds the next batch of segment Interests (Transfer._send). Both work on the transfer's own
 * Python containers (inflight, retries, pending, must_be_fresh, the state bitmap) and call its
 * Python methods for everything rare (a Nack, a congestion mark, a rejected or refused segment),
 * so the pure-Python path and this one share every decision that is not per packet.
 *
 * The SHA-256 is hashlib's (OpenSSL; it releases the GIL for a segment's worth of bytes), the
 * pwrite runs without the GIL. Every read of the buffer is bounded by the packet's end.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "_tlv.h"

#define T_INTEREST_DATA 0x06
#define T_NAME 0x07
#define T_META_INFO 0x14
#define T_SIGNATURE_VALUE 0x17
#define T_CONTENT_TYPE 0x18
#define T_SEGMENT 0x32
#define T_LP_PACKET 0x64
#define T_LP_FRAGMENT 0x50
#define SIG_DIGEST_SHA256 0
#define CT_BLOB 0
#define MAX_TLV_LENGTH 0x10000

typedef struct {
    PyObject *heads[4]; /* bytes: Interest header for segment numbers of 1, 2, 4, 8 bytes */
    PyObject *nonce_tag;
    PyObject *lifetime;
} Layout;

typedef struct {
    PyObject_HEAD
    PyObject *prefix; /* bytes: the versioned name's TLV-VALUE */
    PyObject *done;   /* bytearray: a byte per segment */
    PyObject *inflight, *retries, *pending, *must_be_fresh, *rtt, *cc, *result;
    PyObject *sha256, *tlv_error;
    Layout plain, fresh;
    long long last, segment_size;
    int fd, hook;
} Core;

/* what Transfer keeps as attributes, held here during one call */
typedef struct {
    long long remaining, received_bytes, last_size; /* last_size -1: None */
    double last_data;
} Scalars;

static PyObject *s_remaining, *s_received_bytes, *s_last_size, *s_last_data, *s_nonce,
    *s_next_new, *s_last_asked, *s_retransmissions, *s_window, *s_sample, *s_on_ack, *s_digest,
    *s_popleft, *s_write, *s_reject, *s_refused, *s_receive_lp;

static double monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- attributes of the transfer ------------------------------------------------------------ */

static int get_ll(PyObject *obj, PyObject *attr, long long *out) {
    PyObject *v = PyObject_GetAttr(obj, attr);
    if (v == NULL) return -1;
    if (v == Py_None) {
        *out = -1;
    } else {
        *out = PyLong_AsLongLong(v);
    }
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int set_ll(PyObject *obj, PyObject *attr, long long value, int none_if_negative) {
    PyObject *v = (none_if_negative && value < 0) ? Py_NewRef(Py_None) : PyLong_FromLongLong(value);
    if (v == NULL) return -1;
    int rc = PyObject_SetAttr(obj, attr, v);
    Py_DECREF(v);
    return rc;
}

static int sync_in(PyObject *t, Scalars *s) {
    if (get_ll(t, s_remaining, &s->remaining) < 0) return -1;
    if (get_ll(t, s_received_bytes, &s->received_bytes) < 0) return -1;
    if (get_ll(t, s_last_size, &s->last_size) < 0) return -1;
    PyObject *v = PyObject_GetAttr(t, s_last_data);
    if (v == NULL) return -1;
    s->last_data = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return PyErr_Occurred() ? -1 : 0;
}

static int sync_out(PyObject *t, const Scalars *s) {
    /* keeps a pending exception: the attributes are written back on the error path too */
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    int rc = 0;
    PyObject *f = PyFloat_FromDouble(s->last_data);
    if (f == NULL || PyObject_SetAttr(t, s_last_data, f) < 0) rc = -1;
    Py_XDECREF(f);
    if (rc == 0 && set_ll(t, s_remaining, s->remaining, 0) < 0) rc = -1;
    if (rc == 0 && set_ll(t, s_received_bytes, s->received_bytes, 0) < 0) rc = -1;
    if (rc == 0 && set_ll(t, s_last_size, s->last_size, 1) < 0) rc = -1;
    if (et != NULL) {
        PyErr_Restore(et, ev, tb);
        return -1;
    }
    return rc;
}

/* --- one segment ----------------------------------------------------------------------------- */

static int reject(Core *c, PyObject *t, Scalars *s, long long seg, PyObject *why) {
    if (why == NULL) return -1;
    if (sync_out(t, s) < 0) {
        Py_DECREF(why);
        return -1;
    }
    PyObject *segobj = PyLong_FromLongLong(seg);
    PyObject *r = segobj ? PyObject_CallMethodObjArgs(t, s_reject, segobj, why, NULL) : NULL;
    Py_XDECREF(segobj);
    Py_DECREF(why);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return sync_in(t, s);
}

static int digest_matches(Core *c, const uint8_t *signed_start, const uint8_t *signed_end,
                          const uint8_t *value) {
    PyObject *mv = PyMemoryView_FromMemory((char *)signed_start, signed_end - signed_start,
                                           PyBUF_READ);
    if (mv == NULL) return -1;
    PyObject *h = PyObject_CallOneArg(c->sha256, mv);
    Py_DECREF(mv);
    if (h == NULL) return -1;
    PyObject *d = PyObject_CallMethodNoArgs(h, s_digest);
    Py_DECREF(h);
    if (d == NULL) return -1;
    int ok = PyBytes_GET_SIZE(d) == 32 && memcmp(PyBytes_AS_STRING(d), value, 32) == 0;
    Py_DECREF(d);
    return ok;
}

static int write_content(Core *c, PyObject *t, Scalars *s, long long seg, const uint8_t *content,
                         Py_ssize_t len) {
    if (c->hook) {
        if (sync_out(t, s) < 0) return -1;
        PyObject *segobj = PyLong_FromLongLong(seg);
        PyObject *mv = PyMemoryView_FromMemory((char *)content, len, PyBUF_READ);
        PyObject *r = (segobj && mv) ? PyObject_CallMethodObjArgs(t, s_write, segobj, mv, NULL)
                                     : NULL;
        Py_XDECREF(segobj);
        Py_XDECREF(mv);
        if (r == NULL) return -1;
        Py_DECREF(r);
        return sync_in(t, s);
    }
    off_t offset = (off_t)(seg * c->segment_size);
    Py_ssize_t written = 0;
    int err = 0;
    Py_BEGIN_ALLOW_THREADS
    while (written < len) {
        ssize_t n = pwrite(c->fd, content + written, len - written, offset + written);
        if (n < 0) {
            if (errno == EINTR) continue;
            err = errno;
            break;
        }
        if (n == 0) {
            err = ENOSPC;
            break;
        }
        written += n;
    }
    Py_END_ALLOW_THREADS
    if (err) {
        errno = err;
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    return 0;
}

/* Transfer._stored: Karn's RTT sample, the window's ack, the bitmap and the counters. */
static int stored(Core *c, Scalars *s, uint8_t *done, long long seg, long long size) {
    double now = monotonic();
    s->last_data = now;
    PyObject *segobj = PyLong_FromLongLong(seg);
    if (segobj == NULL) return -1;
    PyObject *sent = PyDict_GetItemWithError(c->inflight, segobj); /* borrowed */
    if (sent == NULL && PyErr_Occurred()) goto fail;
    if (sent != NULL) {
        double sent_at = PyFloat_AsDouble(sent);
        if (sent_at == -1.0 && PyErr_Occurred()) goto fail;
        if (PyDict_DelItem(c->inflight, segobj) < 0) goto fail;
        int retried = PyDict_Contains(c->retries, segobj);
        if (retried < 0) goto fail;
        if (!retried) {
            PyObject *rtt = PyFloat_FromDouble(now - sent_at);
            PyObject *r = rtt ? PyObject_CallMethodOneArg(c->rtt, s_sample, rtt) : NULL;
            Py_XDECREF(rtt);
            if (r == NULL) goto fail;
            Py_DECREF(r);
        }
    }
    Py_DECREF(segobj);
    PyObject *nowobj = PyFloat_FromDouble(now);
    PyObject *r = nowobj ? PyObject_CallMethodOneArg(c->cc, s_on_ack, nowobj) : NULL;
    Py_XDECREF(nowobj);
    if (r == NULL) return -1;
    Py_DECREF(r);
    done[seg] = 1;
    s->remaining -= 1;
    s->received_bytes += size;
    if (seg == c->last) s->last_size = size;
    return 0;
fail:
    Py_DECREF(segobj);
    return -1;
}

static uint8_t *done_bytes(Core *c) {
    if (PyByteArray_GET_SIZE(c->done) <= c->last) {
        PyErr_SetString(PyExc_ValueError, "the state bitmap is shorter than the transfer");
        return NULL;
    }
    return (uint8_t *)PyByteArray_AS_STRING(c->done);
}

/* Transfer._on_data: one Data at [data, end) of the receive buffer `buf`. */
static int on_data(Core *c, PyObject *t, Scalars *s, PyObject *buf, const uint8_t *base,
                   const uint8_t *data, const uint8_t *end) {
    uint64_t ignored;
    const uint8_t *p = varnum(data + 1, end, &ignored); /* the Data's length */
    if (p == NULL || p >= end || *p != T_NAME) return 0;
    const uint8_t *name, *name_end = tlv_value(p, end, &name);
    if (name_end == NULL) return 0;
    Py_ssize_t plen = PyBytes_GET_SIZE(c->prefix);
    const uint8_t *q = name + plen;
    if (name_end - name < plen + 2 || memcmp(name, PyBytes_AS_STRING(c->prefix), plen) != 0 ||
        *q != T_SEGMENT)
        return 0; /* not ours (e.g. a late metadata answer) */
    if (name_end - (q + 2) > 8) return 0; /* a number beyond any segment */
    uint64_t seg = 0;
    for (const uint8_t *b = q + 2; b < name_end; b++) seg = (seg << 8) | *b;
    uint8_t *done = done_bytes(c);
    if (done == NULL) return -1;
    if (seg > (uint64_t)c->last || done[seg]) return 0; /* duplicate */
    if (name_end >= end || *name_end != T_META_INFO)
        return reject(c, t, s, seg, PyUnicode_FromString("no MetaInfo"));
    const uint8_t *meta, *meta_end = tlv_value(name_end, end, &meta);
    if (meta_end == NULL) return reject(c, t, s, seg, PyUnicode_FromString("malformed MetaInfo"));
    if (meta_end - meta >= 3 && meta[0] == T_CONTENT_TYPE && meta[2] != CT_BLOB) {
        /* the producer refuses (e.g. a new version): _refused raises its message */
        if (sync_out(t, s) < 0) return -1;
        PyObject *a = PyLong_FromSsize_t(data - base), *b = PyLong_FromSsize_t(end - base);
        PyObject *r = (a && b) ? PyObject_CallMethodObjArgs(t, s_refused, buf, a, b, NULL) : NULL;
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (r == NULL) return -1;
        Py_DECREF(r);
        return sync_in(t, s);
    }
    const uint8_t *content, *content_end = tlv_value(meta_end, end, &content);
    const uint8_t *sig = NULL, *sig_end = content_end ? tlv_value(content_end, end, &sig) : NULL;
    if (sig_end == NULL || sig_end - sig < 3)
        return reject(c, t, s, seg, PyUnicode_FromString("malformed Data"));
    if (sig[2] == SIG_DIGEST_SHA256) {
        const uint8_t *value;
        const uint8_t *value_end = *sig_end == T_SIGNATURE_VALUE && sig_end < end
                                       ? tlv_value(sig_end, end, &value)
                                       : NULL;
        int ok = value_end != NULL && value_end - value == 32;
        if (ok && (ok = digest_matches(c, p, sig_end, value)) < 0) return -1;
        if (!ok) return reject(c, t, s, seg, PyUnicode_FromString("digest mismatch"));
    }
    long long size = content_end - content;
    long long expected = (long long)seg < c->last ? c->segment_size : s->last_size;
    if (expected >= 0 && size != expected)
        return reject(c, t, s, seg,
                      PyUnicode_FromFormat("%lld bytes, %lld expected", size, expected));
    if (write_content(c, t, s, seg, content, size) < 0) return -1;
    if ((done = done_bytes(c)) == NULL) return -1;
    return stored(c, s, done, seg, size);
}

static int receive_lp(PyObject *t, Scalars *s, Py_ssize_t value_start, Py_ssize_t end) {
    if (sync_out(t, s) < 0) return -1;
    PyObject *a = PyLong_FromSsize_t(value_start), *b = PyLong_FromSsize_t(end);
    PyObject *r = (a && b) ? PyObject_CallMethodObjArgs(t, s_receive_lp, a, b, NULL) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return sync_in(t, s);
}

/* --- Core ---------------------------------------------------------------------------------- */

static PyObject *Core_receive(Core *c, PyObject *args) {
    PyObject *t, *buf;
    Py_ssize_t start, stop;
    if (!PyArg_ParseTuple(args, "OYnn:receive", &t, &buf, &start, &stop)) return NULL;
    if (start < 0 || stop < start || stop > PyByteArray_GET_SIZE(buf)) {
        PyErr_SetString(PyExc_ValueError, "offsets outside the buffer");
        return NULL;
    }
    Scalars s;
    if (sync_in(t, &s) < 0) return NULL;
    const uint8_t *base = (const uint8_t *)PyByteArray_AS_STRING(buf);
    const uint8_t *pos = base + start, *end = base + stop;
    int rc = 0;
    while (pos < end && rc == 0) {
        uint64_t typ, len;
        const uint8_t *p = varnum(pos, end, &typ);
        if (p == NULL || (p = varnum(p, end, &len)) == NULL) break; /* incomplete */
        if (len > MAX_TLV_LENGTH) {
            PyErr_Format(c->tlv_error, "packet of %llu bytes: stream out of sync",
                         (unsigned long long)len);
            rc = -1;
            break;
        }
        if (len > (uint64_t)(end - p)) break;
        const uint8_t *packet = pos, *packet_end = p + len;
        pos = packet_end;
        if (typ == T_LP_PACKET) {
            if (len > 0 && *p == T_LP_FRAGMENT) {
                /* NDNd's usual wrapper: a bare fragment, nothing to look at */
                const uint8_t *frag;
                if (tlv_value(p, packet_end, &frag) != NULL && frag < packet_end &&
                    *frag == T_INTEREST_DATA)
                    rc = on_data(c, t, &s, buf, base, frag, packet_end);
                continue;
            }
            rc = receive_lp(t, &s, p - base, packet_end - base);
        } else if (typ == T_INTEREST_DATA) {
            rc = on_data(c, t, &s, buf, base, packet, packet_end);
        }
    }
    if (sync_out(t, &s) < 0 || rc < 0) return NULL;
    return PyLong_FromSsize_t(pos - base);
}

/* Append one Interest for `seg` to out (at least 8 + the longest header + tail bytes free). */
static size_t encode(const Layout *l, uint8_t *out, uint64_t seg, uint32_t nonce) {
    int wi = seg < 0x100 ? 0 : seg < 0x10000 ? 1 : seg < 0x100000000ULL ? 2 : 3;
    int width = 1 << wi;
    uint8_t *p = out;
    memcpy(p, PyBytes_AS_STRING(l->heads[wi]), PyBytes_GET_SIZE(l->heads[wi]));
    p += PyBytes_GET_SIZE(l->heads[wi]);
    for (int i = width - 1; i >= 0; i--) *p++ = (uint8_t)(seg >> (8 * i));
    memcpy(p, PyBytes_AS_STRING(l->nonce_tag), PyBytes_GET_SIZE(l->nonce_tag));
    p += PyBytes_GET_SIZE(l->nonce_tag);
    for (int i = 3; i >= 0; i--) *p++ = (uint8_t)(nonce >> (8 * i));
    memcpy(p, PyBytes_AS_STRING(l->lifetime), PyBytes_GET_SIZE(l->lifetime));
    return (size_t)(p - out) + PyBytes_GET_SIZE(l->lifetime);
}

static size_t layout_max(const Layout *l) {
    return PyBytes_GET_SIZE(l->heads[3]) + 8 + PyBytes_GET_SIZE(l->nonce_tag) + 4 +
           PyBytes_GET_SIZE(l->lifetime);
}

/* Transfer._send's batch: pending segments first, then new ones; returns the Interests as one
 * bytes object (None when the window is full or nothing is left to ask). */
static PyObject *Core_send(Core *c, PyObject *args) {
    PyObject *t;
    double now;
    if (!PyArg_ParseTuple(args, "Od:send", &t, &now)) return NULL;
    PyObject *w = PyObject_GetAttr(c->cc, s_window);
    if (w == NULL) return NULL;
    double window = PyFloat_AsDouble(w);
    Py_DECREF(w);
    if (window == -1.0 && PyErr_Occurred()) return NULL;
    Py_ssize_t room = (Py_ssize_t)window - PyDict_GET_SIZE(c->inflight);
    if (room <= 0) Py_RETURN_NONE;
    long long nonce, next_new, last_asked, retransmissions;
    if (get_ll(t, s_nonce, &nonce) < 0 || get_ll(t, s_next_new, &next_new) < 0 ||
        get_ll(t, s_last_asked, &last_asked) < 0 ||
        get_ll(c->result, s_retransmissions, &retransmissions) < 0)
        return NULL;
    size_t per = layout_max(&c->plain) > layout_max(&c->fresh) ? layout_max(&c->plain)
                                                                 : layout_max(&c->fresh);
    uint8_t *out = PyMem_Malloc(per * (size_t)room);
    if (out == NULL) return PyErr_NoMemory();
    size_t used = 0;
    PyObject *sent = PyFloat_FromDouble(now), *result = NULL;
    if (sent == NULL) goto done;
    while (room > 0) {
        uint8_t *done = done_bytes(c);
        if (done == NULL) goto done;
        long long seg;
        const Layout *layout = &c->plain;
        PyObject *segobj;
        if (PyObject_Length(c->pending) > 0) {
            segobj = PyObject_CallMethodNoArgs(c->pending, s_popleft);
            if (segobj == NULL || ((seg = PyLong_AsLongLong(segobj)) == -1 && PyErr_Occurred()))
                goto fail_seg;
            if (seg < 0 || seg > c->last) {
                PyErr_Format(PyExc_ValueError, "segment %lld queued, beyond the last", seg);
                goto fail_seg;
            }
            int in_flight = PyDict_Contains(c->inflight, segobj);
            if (in_flight < 0) goto fail_seg;
            if (done[seg] || in_flight) {
                Py_DECREF(segobj);
                continue;
            }
            retransmissions++;
            int fresh = PySet_Contains(c->must_be_fresh, segobj);
            if (fresh < 0) goto fail_seg;
            if (fresh) layout = &c->fresh;
        } else if (next_new <= last_asked) {
            seg = next_new++;
            if (done[seg]) continue;
            segobj = PyLong_FromLongLong(seg);
            if (segobj == NULL) goto done;
        } else {
            break;
        }
        nonce = (nonce + 0x9E3779B1LL) & 0xFFFFFFFFLL;
        used += encode(layout, out + used, (uint64_t)seg, (uint32_t)nonce);
        int rc = PyDict_SetItem(c->inflight, segobj, sent);
        Py_DECREF(segobj);
        if (rc < 0) goto done;
        room--;
        continue;
    fail_seg:
        Py_XDECREF(segobj);
        goto done;
    }
    if (set_ll(t, s_nonce, nonce, 0) < 0 || set_ll(t, s_next_new, next_new, 0) < 0 ||
        set_ll(c->result, s_retransmissions, retransmissions, 0) < 0)
        goto done;
    result = used ? PyBytes_FromStringAndSize((const char *)out, used) : Py_NewRef(Py_None);
done:
    if (result == NULL) {
        /* what was sent is already recorded in inflight: keep the counters consistent */
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        set_ll(t, s_nonce, nonce, 0);
        set_ll(t, s_next_new, next_new, 0);
        set_ll(c->result, s_retransmissions, retransmissions, 0);
        PyErr_Restore(et, ev, tb);
    }
    Py_XDECREF(sent);
    PyMem_Free(out);
    return result;
}

static int parse_layout(PyObject *obj, Layout *l) {
    PyObject *heads;
    if (!PyArg_ParseTuple(obj, "O!SS", &PyTuple_Type, &heads, &l->nonce_tag, &l->lifetime))
        return -1;
    if (PyTuple_GET_SIZE(heads) != 4) {
        PyErr_SetString(PyExc_ValueError, "four Interest headers expected");
        return -1;
    }
    for (int i = 0; i < 4; i++) {
        l->heads[i] = PyTuple_GET_ITEM(heads, i);
        if (!PyBytes_Check(l->heads[i])) {
            PyErr_SetString(PyExc_TypeError, "Interest headers must be bytes");
            return -1;
        }
        Py_INCREF(l->heads[i]);
    }
    Py_INCREF(l->nonce_tag);
    Py_INCREF(l->lifetime);
    return 0;
}

static void clear_layout(Layout *l) {
    for (int i = 0; i < 4; i++) Py_CLEAR(l->heads[i]);
    Py_CLEAR(l->nonce_tag);
    Py_CLEAR(l->lifetime);
}

static int Core_init(Core *c, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"prefix", "last", "segment_size", "fd", "done", "inflight", "retries",
                         "pending", "must_be_fresh", "rtt", "cc", "result", "interests",
                         "fresh_interests", "hook", "sha256", "tlv_error", NULL};
    PyObject *prefix, *done, *inflight, *retries, *pending, *fresh_set, *rtt, *cc, *result;
    PyObject *plain, *fresh, *sha256, *tlv_error;
    long long last, segment_size;
    int fd, hook;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "SLLiYO!OOO!OOOO!O!pOO:Core", kw, &prefix, &last, &segment_size, &fd,
            &done, &PyDict_Type, &inflight, &retries, &pending, &PySet_Type, &fresh_set, &rtt,
            &cc, &result, &PyTuple_Type, &plain, &PyTuple_Type, &fresh, &hook, &sha256,
            &tlv_error))
        return -1;
    if (!PyDict_Check(retries) || last < 0 || segment_size <= 0) {
        PyErr_SetString(PyExc_ValueError, "bad transfer parameters");
        return -1;
    }
    if (parse_layout(plain, &c->plain) < 0 || parse_layout(fresh, &c->fresh) < 0) return -1;
#define KEEP(field, value) Py_XSETREF(c->field, Py_NewRef(value))
    KEEP(prefix, prefix);
    KEEP(done, done);
    KEEP(inflight, inflight);
    KEEP(retries, retries);
    KEEP(pending, pending);
    KEEP(must_be_fresh, fresh_set);
    KEEP(rtt, rtt);
    KEEP(cc, cc);
    KEEP(result, result);
    KEEP(sha256, sha256);
    KEEP(tlv_error, tlv_error);
#undef KEEP
    c->last = last;
    c->segment_size = segment_size;
    c->fd = fd;
    c->hook = hook;
    return done_bytes(c) == NULL ? -1 : 0;
}

static int Core_traverse(Core *c, visitproc visit, void *arg) {
    Py_VISIT(c->prefix);
    Py_VISIT(c->done);
    Py_VISIT(c->inflight);
    Py_VISIT(c->retries);
    Py_VISIT(c->pending);
    Py_VISIT(c->must_be_fresh);
    Py_VISIT(c->rtt);
    Py_VISIT(c->cc);
    Py_VISIT(c->result);
    Py_VISIT(c->sha256);
    Py_VISIT(c->tlv_error);
    return 0;
}

static int Core_clear(Core *c) {
    Py_CLEAR(c->prefix);
    Py_CLEAR(c->done);
    Py_CLEAR(c->inflight);
    Py_CLEAR(c->retries);
    Py_CLEAR(c->pending);
    Py_CLEAR(c->must_be_fresh);
    Py_CLEAR(c->rtt);
    Py_CLEAR(c->cc);
    Py_CLEAR(c->result);
    Py_CLEAR(c->sha256);
    Py_CLEAR(c->tlv_error);
    clear_layout(&c->plain);
    clear_layout(&c->fresh);
    return 0;
}

static void Core_dealloc(Core *c) {
    PyObject_GC_UnTrack(c);
    Core_clear(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyMethodDef Core_methods[] = {
    {"receive", (PyCFunction)Core_receive, METH_VARARGS,
     "receive(transfer, buf, start, end) -> offset of the first incomplete packet"},
    {"send", (PyCFunction)Core_send, METH_VARARGS,
     "send(transfer, now) -> the next Interests as one bytes object, or None"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ndnsci.ndn._hotloop.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The per-packet work of one Transfer (see ndnsci.ndn.consumer).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
};

static struct PyModuleDef hotloop_module = {
    PyModuleDef_HEAD_INIT, "_hotloop", "The consumer's compiled hot loop.", -1, NULL,
};

PyMODINIT_FUNC PyInit__hotloop(void) {
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {
        {&s_remaining, "remaining"},     {&s_received_bytes, "received_bytes"},
        {&s_last_size, "last_size"},     {&s_last_data, "last_data"},
        {&s_nonce, "nonce"},             {&s_next_new, "next_new"},
        {&s_last_asked, "last_asked"},   {&s_retransmissions, "retransmissions"},
        {&s_window, "window"},           {&s_sample, "sample"},
        {&s_on_ack, "on_ack"},           {&s_digest, "digest"},
        {&s_popleft, "popleft"},         {&s_write, "_write"},
        {&s_reject, "_reject"},          {&s_refused, "_refused"},
        {&s_receive_lp, "_receive_lp"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if ((*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL) return NULL;
    }
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&hotloop_module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
