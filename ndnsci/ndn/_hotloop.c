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
    if (sig[2] == SIG_DIGEST_SHA256 && c->sha256 != Py_None) { /* None: deferred */
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

/* ---- Ed25519 verification (RFC 8032, 5.1.7): ndnsci/ndn/ed25519.py's verify, compiled -------
 *
 * The same checks as the pure-Python module, in the same order, with the same verdicts: False
 * for lengths other than 32 and 64, S >= L, a public key that is not a canonical encoding of a
 * point on the curve (y >= p, no x, x = 0 with the sign bit set) or of small order; then
 * [S]B + [k](-A), k = SHA-512(R || A || M) mod L, must encode to R's 32 bytes and not be of
 * small order (R itself is not decoded). Public values only: nothing is constant-time.
 *
 * Field elements are five 51-bit limbs (radix 2^51, products in unsigned __int128); points are
 * extended coordinates (X:Y:Z:T); the double-scalar multiplication interleaves the width-5 NAFs
 * of S and k over odd multiples of B (made once) and of -A. SHA-512 is FIPS 180-4's. */

typedef uint64_t fe[5];
typedef unsigned __int128 u128;
#define M51 ((uint64_t)0x7ffffffffffff)

static const fe fe_d2 = {0x69b9426b2f159, 0x35050762add7a, 0x3cf44c0038052, 0x6738cc7407977,
                         0x2406d9dc56dff}; /* 2d */
static const fe fe_sqrtm1 = {0x61b274a0ea0b0, 0x0d5a5fc8f189d, 0x7ef5e9cbd0c60, 0x78595a6804c9e,
                             0x2b8324804fc1d};
static const fe fe_d = {0x34dca135978a3, 0x1a8283b156ebd, 0x5e7a26001c029, 0x739c663a03cbb,
                        0x52036cee2b6ff};

static void fe_carry(fe h) {
    uint64_t c;
    c = h[0] >> 51, h[0] &= M51, h[1] += c;
    c = h[1] >> 51, h[1] &= M51, h[2] += c;
    c = h[2] >> 51, h[2] &= M51, h[3] += c;
    c = h[3] >> 51, h[3] &= M51, h[4] += c;
    c = h[4] >> 51, h[4] &= M51, h[0] += 19 * c;
}

static void fe_add(fe h, const fe f, const fe g) {
    for (int i = 0; i < 5; i++) h[i] = f[i] + g[i];
    fe_carry(h);
}

/* f - g + 4p: limbs of g below 2^53 */
static void fe_sub(fe h, const fe f, const fe g) {
    h[0] = f[0] + 0x1fffffffffffb4 - g[0];
    for (int i = 1; i < 5; i++) h[i] = f[i] + 0x1ffffffffffffc - g[i];
    fe_carry(h);
}

static void fe_neg(fe h, const fe f) {
    static const fe zero = {0, 0, 0, 0, 0};
    fe_sub(h, zero, f);
}

static void fe_reduce_wide(fe h, u128 r0, u128 r1, u128 r2, u128 r3, u128 r4) {
    r1 += r0 >> 51;
    r2 += r1 >> 51;
    r3 += r2 >> 51;
    r4 += r3 >> 51;
    u128 c = (r4 >> 51) * 19 + ((uint64_t)r0 & M51);
    h[0] = (uint64_t)c & M51;
    h[1] = ((uint64_t)r1 & M51) + (uint64_t)(c >> 51);
    h[2] = (uint64_t)r2 & M51;
    h[3] = (uint64_t)r3 & M51;
    h[4] = (uint64_t)r4 & M51;
}

/* limbs of f and g below 2^54 */
static void fe_mul(fe h, const fe f, const fe g) {
    uint64_t g1 = 19 * g[1], g2 = 19 * g[2], g3 = 19 * g[3], g4 = 19 * g[4];
    u128 r0 = (u128)f[0] * g[0] + (u128)f[1] * g4 + (u128)f[2] * g3 + (u128)f[3] * g2 +
              (u128)f[4] * g1;
    u128 r1 = (u128)f[0] * g[1] + (u128)f[1] * g[0] + (u128)f[2] * g4 + (u128)f[3] * g3 +
              (u128)f[4] * g2;
    u128 r2 = (u128)f[0] * g[2] + (u128)f[1] * g[1] + (u128)f[2] * g[0] + (u128)f[3] * g4 +
              (u128)f[4] * g3;
    u128 r3 = (u128)f[0] * g[3] + (u128)f[1] * g[2] + (u128)f[2] * g[1] + (u128)f[3] * g[0] +
              (u128)f[4] * g4;
    u128 r4 = (u128)f[0] * g[4] + (u128)f[1] * g[3] + (u128)f[2] * g[2] + (u128)f[3] * g[1] +
              (u128)f[4] * g[0];
    fe_reduce_wide(h, r0, r1, r2, r3, r4);
}

static void fe_sq(fe h, const fe f) {
    uint64_t f0_2 = 2 * f[0], f1_2 = 2 * f[1], f3_19 = 19 * f[3], f4_19 = 19 * f[4];
    u128 r0 = (u128)f[0] * f[0] + (u128)f1_2 * f4_19 + (u128)(2 * f[2]) * f3_19;
    u128 r1 = (u128)f0_2 * f[1] + (u128)(2 * f[2]) * f4_19 + (u128)f[3] * f3_19;
    u128 r2 = (u128)f0_2 * f[2] + (u128)f[1] * f[1] + (u128)(2 * f[3]) * f4_19;
    u128 r3 = (u128)f0_2 * f[3] + (u128)f1_2 * f[2] + (u128)f[4] * f4_19;
    u128 r4 = (u128)f0_2 * f[4] + (u128)f1_2 * f[3] + (u128)f[2] * f[2];
    fe_reduce_wide(h, r0, r1, r2, r3, r4);
}

static void fe_sq_times(fe h, const fe f, int n) {
    fe_sq(h, f);
    while (--n > 0) fe_sq(h, h);
}

/* the low 255 bits of 32 little-endian bytes (bit 255 is the caller's) */
static void fe_from_bytes(fe h, const unsigned char *s) {
    uint64_t w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = 0;
        for (int j = 7; j >= 0; j--) w[i] = w[i] << 8 | s[8 * i + j];
    }
    h[0] = w[0] & M51;
    h[1] = (w[0] >> 51 | w[1] << 13) & M51;
    h[2] = (w[1] >> 38 | w[2] << 26) & M51;
    h[3] = (w[2] >> 25 | w[3] << 39) & M51;
    h[4] = (w[3] >> 12) & M51;
}

/* the canonical encoding (the value mod p, below p) */
static void fe_to_bytes(unsigned char *s, const fe f) {
    fe h;
    memcpy(h, f, sizeof(fe));
    fe_carry(h);
    fe_carry(h); /* h[1..4] < 2^51, h[0] < 2^51 + 19: h < p + 38 */
    uint64_t q = (h[0] + 19) >> 51; /* 1 when h >= p */
    q = (h[1] + q) >> 51;
    q = (h[2] + q) >> 51;
    q = (h[3] + q) >> 51;
    q = (h[4] + q) >> 51;
    h[0] += 19 * q; /* h - p = h + 19 - 2^255 */
    h[1] += h[0] >> 51, h[0] &= M51;
    h[2] += h[1] >> 51, h[1] &= M51;
    h[3] += h[2] >> 51, h[2] &= M51;
    h[4] += h[3] >> 51, h[3] &= M51;
    h[4] &= M51;
    uint64_t w[4] = {h[0] | h[1] << 51, h[1] >> 13 | h[2] << 38, h[2] >> 26 | h[3] << 25,
                     h[3] >> 39 | h[4] << 12};
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 8; j++) s[8 * i + j] = (unsigned char)(w[i] >> (8 * j));
    }
}

static int fe_is_zero(const fe f) {
    unsigned char s[32];
    fe_to_bytes(s, f);
    unsigned char any = 0;
    for (int i = 0; i < 32; i++) any |= s[i];
    return any == 0;
}

static int fe_equal(const fe f, const fe g) {
    fe d;
    fe_sub(d, f, g);
    return fe_is_zero(d);
}

static int fe_is_odd(const fe f) {
    unsigned char s[32];
    fe_to_bytes(s, f);
    return s[0] & 1;
}

/* z^(2^250 - 1) in *big, z^11 in *eleven */
static void fe_pow_2_250_1(fe big, fe eleven, const fe z) {
    fe t0, t1, t2, t3;
    fe_sq(t0, z);              /* 2 */
    fe_sq_times(t1, t0, 2);    /* 8 */
    fe_mul(t1, z, t1);         /* 9 */
    fe_mul(t0, t0, t1);        /* 11 */
    memcpy(eleven, t0, sizeof(fe));
    fe_sq(t2, t0);             /* 22 */
    fe_mul(t1, t1, t2);        /* 2^5 - 1 */
    fe_sq_times(t2, t1, 5);
    fe_mul(t1, t2, t1);        /* 2^10 - 1 */
    fe_sq_times(t2, t1, 10);
    fe_mul(t2, t2, t1);        /* 2^20 - 1 */
    fe_sq_times(t3, t2, 20);
    fe_mul(t2, t3, t2);        /* 2^40 - 1 */
    fe_sq_times(t2, t2, 10);
    fe_mul(t1, t2, t1);        /* 2^50 - 1 */
    fe_sq_times(t2, t1, 50);
    fe_mul(t2, t2, t1);        /* 2^100 - 1 */
    fe_sq_times(t3, t2, 100);
    fe_mul(t2, t3, t2);        /* 2^200 - 1 */
    fe_sq_times(t2, t2, 50);
    fe_mul(big, t2, t1);       /* 2^250 - 1 */
}

static void fe_invert(fe h, const fe z) {
    fe big, eleven;
    fe_pow_2_250_1(big, eleven, z);
    fe_sq_times(big, big, 5); /* 2^255 - 32 */
    fe_mul(h, big, eleven);   /* 2^255 - 21 = p - 2 */
}

static void fe_pow_p58(fe h, const fe z) { /* z^((p - 5) / 8) = z^(2^252 - 3) */
    fe big, eleven;
    fe_pow_2_250_1(big, eleven, z);
    fe_sq_times(big, big, 2);
    fe_mul(h, big, z);
}

typedef struct {
    fe x, y, z, t;
} ge; /* x = X/Z, y = Y/Z, xy = T/Z */

typedef struct {
    fe ypx, ymx, z2, t2d;
} ge_cached; /* Y + X, Y - X, 2Z, 2dT: a point ready to be added */

static void ge_identity(ge *p) {
    memset(p, 0, sizeof(ge));
    p->y[0] = p->z[0] = 1;
}

static void ge_to_cached(ge_cached *c, const ge *p) {
    fe_add(c->ypx, p->y, p->x);
    fe_sub(c->ymx, p->y, p->x);
    fe_add(c->z2, p->z, p->z);
    fe_mul(c->t2d, p->t, fe_d2);
}

/* p + q, or p - q (add-2008-hwcd-3) */
static void ge_add(ge *r, const ge *p, const ge_cached *q, int minus) {
    fe a, b, c, d, e, f, g, h, t;
    fe_sub(t, p->y, p->x);
    fe_mul(a, t, minus ? q->ypx : q->ymx);
    fe_add(t, p->y, p->x);
    fe_mul(b, t, minus ? q->ymx : q->ypx);
    fe_mul(c, p->t, q->t2d);
    fe_mul(d, p->z, q->z2);
    fe_sub(e, b, a);
    fe_add(h, b, a);
    if (minus) {
        fe_add(f, d, c);
        fe_sub(g, d, c);
    } else {
        fe_sub(f, d, c);
        fe_add(g, d, c);
    }
    fe_mul(r->x, e, f);
    fe_mul(r->y, g, h);
    fe_mul(r->z, f, g);
    fe_mul(r->t, e, h);
}

/* 2p (dbl-2008-hwcd) */
static void ge_double(ge *r, const ge *p) {
    fe a, b, c, e, f, g, h, t;
    fe_sq(a, p->x);
    fe_sq(b, p->y);
    fe_sq(c, p->z);
    fe_add(c, c, c);
    fe_add(h, a, b);
    fe_add(t, p->x, p->y);
    fe_sq(t, t);
    fe_sub(e, h, t);
    fe_sub(g, a, b);
    fe_add(f, c, g);
    fe_mul(r->x, e, f);
    fe_mul(r->y, g, h);
    fe_mul(r->z, f, g);
    fe_mul(r->t, e, h);
}

/* the 8 points whose order divides the cofactor (the identity included) */
static int ge_is_small_order(const ge *p) {
    ge q;
    ge_double(&q, p);
    ge_double(&q, &q);
    ge_double(&q, &q);
    return fe_is_zero(q.x) && fe_equal(q.y, q.z);
}

static void ge_encode(unsigned char *s, const ge *p) {
    fe inverse, x, y;
    fe_invert(inverse, p->z);
    fe_mul(x, p->x, inverse);
    fe_mul(y, p->y, inverse);
    fe_to_bytes(s, y);
    s[31] |= (unsigned char)(fe_is_odd(x) << 7);
}

/* 0 when s is not the canonical encoding of a point on the curve (RFC 8032, 5.1.3) */
static int ge_decode(ge *p, const unsigned char *s) {
    static const unsigned char p_bytes[32] = {
        0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    int sign = s[31] >> 7;
    int i = 31; /* y >= p? (bit 255 is the sign) */
    if ((s[31] & 0x7f) != p_bytes[31]) {
        if ((s[31] & 0x7f) > p_bytes[31]) return 0;
    } else {
        for (i = 30; i >= 0 && s[i] == p_bytes[i]; i--) {
        }
        if (i < 0 || s[i] > p_bytes[i]) return 0;
    }
    fe y, y2, u, v, v3, x, t, vx2;
    static const fe one = {1, 0, 0, 0, 0};
    fe_from_bytes(y, s);
    fe_sq(y2, y);
    fe_sub(u, y2, one);    /* y^2 - 1 */
    fe_mul(v, y2, fe_d);
    fe_add(v, v, one);     /* d y^2 + 1 */
    fe_sq(v3, v);
    fe_mul(v3, v3, v);     /* v^3 */
    fe_sq(t, v3);
    fe_mul(t, t, v);       /* v^7 */
    fe_mul(t, t, u);       /* u v^7 */
    fe_pow_p58(t, t);
    fe_mul(x, u, v3);
    fe_mul(x, x, t);       /* u v^3 (u v^7)^((p-5)/8) */
    fe_sq(vx2, x);
    fe_mul(vx2, vx2, v);
    fe_neg(t, u);
    if (fe_equal(vx2, t)) {
        fe_mul(x, x, fe_sqrtm1);
    } else if (!fe_equal(vx2, u)) {
        return 0; /* no square root: not on the curve */
    }
    if (fe_is_zero(x) && sign) return 0; /* -0: a second encoding of the same point */
    if (fe_is_odd(x) != sign) fe_neg(x, x);
    ge_identity(p);
    memcpy(p->x, x, sizeof(fe));
    memcpy(p->y, y, sizeof(fe));
    fe_mul(p->t, x, y);
    return 1;
}

/* scalars: 256-bit little-endian numbers as four 64-bit words */
static const uint64_t sc_L[4] = {0x5812631a5cf5d3ed, 0x14def9dea2f79cd6, 0, 0x1000000000000000};

static int sc_below_l(const uint64_t *a) {
    for (int i = 3; i >= 0; i--) {
        if (a[i] != sc_L[i]) return a[i] < sc_L[i];
    }
    return 0;
}

static void sc_load(uint64_t *w, const unsigned char *s) {
    for (int i = 0; i < 4; i++) {
        w[i] = 0;
        for (int j = 7; j >= 0; j--) w[i] = w[i] << 8 | s[8 * i + j];
    }
}

/* a 64-byte little-endian number mod L, bit by bit from the top (~10 us) */
static void sc_reduce512(uint64_t *r, const unsigned char *s) {
    r[0] = r[1] = r[2] = r[3] = 0;
    for (int bit = 511; bit >= 0; bit--) {
        r[3] = r[3] << 1 | r[2] >> 63; /* r < L < 2^253: no bit is lost */
        r[2] = r[2] << 1 | r[1] >> 63;
        r[1] = r[1] << 1 | r[0] >> 63;
        r[0] = r[0] << 1 | ((s[bit >> 3] >> (bit & 7)) & 1);
        if (!sc_below_l(r)) {
            unsigned __int128 borrow = 0;
            for (int i = 0; i < 4; i++) {
                unsigned __int128 d = (unsigned __int128)r[i] - sc_L[i] - borrow;
                r[i] = (uint64_t)d;
                borrow = (d >> 64) & 1;
            }
        }
    }
}

#define NAF_WINDOW 5
#define NAF_TABLE (1 << (NAF_WINDOW - 2)) /* odd multiples P, 3P, ... 15P */

/* the width-5 NAF of a scalar below 2^253, least significant digit first; 256 digits */
static void sc_naf(signed char *digits, const uint64_t *scalar) {
    uint64_t k[4];
    memcpy(k, scalar, sizeof(k));
    for (int i = 0; i < 256; i++) {
        int digit = 0;
        if (k[0] & 1) {
            digit = (int)(k[0] & ((1 << NAF_WINDOW) - 1));
            if (digit >= 1 << (NAF_WINDOW - 1)) digit -= 1 << NAF_WINDOW;
            /* k -= digit */
            if (digit > 0) {
                uint64_t before = k[0];
                k[0] -= (uint64_t)digit;
                for (int j = 1; j < 4 && k[j - 1] > before; j++) before = k[j], k[j]--;
            } else {
                uint64_t add = (uint64_t)(-digit);
                k[0] += add;
                for (int j = 1; j < 4 && k[j - 1] < add; j++) add = 1, k[j] += 1;
            }
        }
        digits[i] = (signed char)digit;
        k[0] = k[0] >> 1 | k[1] << 63;
        k[1] = k[1] >> 1 | k[2] << 63;
        k[2] = k[2] >> 1 | k[3] << 63;
        k[3] >>= 1;
    }
}

static void ge_odd_multiples(ge_cached *table, const ge *p) {
    ge twice, sum = *p;
    ge_cached twice_c;
    ge_double(&twice, p);
    ge_to_cached(&twice_c, &twice);
    ge_to_cached(&table[0], p);
    for (int i = 1; i < NAF_TABLE; i++) {
        ge_add(&sum, &sum, &twice_c, 0);
        ge_to_cached(&table[i], &sum);
    }
}

static ge_cached base_table[NAF_TABLE];
static int base_table_made;

/* [s]B + [k]q, the two sums interleaved (Straus) */
static void ge_double_scalar(ge *r, const uint64_t *s, const uint64_t *k, const ge *q) {
    static const unsigned char base_bytes[32] = {
        0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
        0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66};
    if (!base_table_made) {
        ge base;
        ge_decode(&base, base_bytes);
        ge_odd_multiples(base_table, &base);
        base_table_made = 1;
    }
    ge_cached q_table[NAF_TABLE];
    ge_odd_multiples(q_table, q);
    signed char s_digits[256], k_digits[256];
    sc_naf(s_digits, s);
    sc_naf(k_digits, k);
    int i = 255;
    while (i >= 0 && s_digits[i] == 0 && k_digits[i] == 0) i--;
    ge_identity(r);
    for (; i >= 0; i--) {
        ge_double(r, r);
        if (s_digits[i] > 0) ge_add(r, r, &base_table[s_digits[i] >> 1], 0);
        if (s_digits[i] < 0) ge_add(r, r, &base_table[-s_digits[i] >> 1], 1);
        if (k_digits[i] > 0) ge_add(r, r, &q_table[k_digits[i] >> 1], 0);
        if (k_digits[i] < 0) ge_add(r, r, &q_table[-k_digits[i] >> 1], 1);
    }
}

/* SHA-512 (FIPS 180-4) */
static const uint64_t sha512_k[80] = {
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
    0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
    0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
    0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
    0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
    0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
    0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
    0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
    0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
    0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
    0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
    0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
    0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
};

typedef struct {
    uint64_t h[8];
    unsigned char block[128];
    size_t used;   /* bytes in block */
    uint64_t size; /* bytes hashed */
} Sha512;

#define ROTR64(x, n) ((x) >> (n) | (x) << (64 - (n)))

static void sha512_compress(uint64_t *h, const unsigned char *block) {
    uint64_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6],
                    hh = h[7];
    for (int i = 0; i < 16; i++) {
        w[i] = 0;
        for (int j = 0; j < 8; j++) w[i] = w[i] << 8 | block[8 * i + j];
    }
    for (int i = 16; i < 80; i++) {
        uint64_t s0 = ROTR64(w[i - 15], 1) ^ ROTR64(w[i - 15], 8) ^ (w[i - 15] >> 7);
        uint64_t s1 = ROTR64(w[i - 2], 19) ^ ROTR64(w[i - 2], 61) ^ (w[i - 2] >> 6);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    for (int i = 0; i < 80; i++) {
        uint64_t t1 = hh + (ROTR64(e, 14) ^ ROTR64(e, 18) ^ ROTR64(e, 41)) + ((e & f) ^ (~e & g)) +
                      sha512_k[i] + w[i];
        uint64_t t2 = (ROTR64(a, 28) ^ ROTR64(a, 34) ^ ROTR64(a, 39)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

static void sha512_init(Sha512 *s) {
    static const uint64_t iv[8] = {0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b,
                                   0xa54ff53a5f1d36f1, 0x510e527fade682d1, 0x9b05688c2b3e6c1f,
                                   0x1f83d9abfb41bd6b, 0x5be0cd19137e2179};
    memcpy(s->h, iv, sizeof(iv));
    s->used = 0;
    s->size = 0;
}

static void sha512_update(Sha512 *s, const unsigned char *data, size_t n) {
    s->size += n;
    if (s->used) {
        size_t take = 128 - s->used < n ? 128 - s->used : n;
        memcpy(s->block + s->used, data, take);
        s->used += take, data += take, n -= take;
        if (s->used < 128) return;
        sha512_compress(s->h, s->block);
        s->used = 0;
    }
    for (; n >= 128; data += 128, n -= 128) sha512_compress(s->h, data);
    memcpy(s->block, data, n);
    s->used = n;
}

static void sha512_final(Sha512 *s, unsigned char *out) {
    uint64_t bits = s->size * 8; /* messages below 2^61 bytes: the length's top 64 bits are 0 */
    s->block[s->used++] = 0x80;
    if (s->used > 112) {
        memset(s->block + s->used, 0, 128 - s->used);
        sha512_compress(s->h, s->block);
        s->used = 0;
    }
    memset(s->block + s->used, 0, 128 - s->used);
    for (int j = 0; j < 8; j++) s->block[127 - j] = (unsigned char)(bits >> (8 * j));
    sha512_compress(s->h, s->block);
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) out[8 * i + j] = (unsigned char)(s->h[i] >> (56 - 8 * j));
    }
}

static int ed25519_check(const unsigned char *public, const unsigned char *message, size_t size,
                         const unsigned char *signature) {
    uint64_t s[4], k[4];
    sc_load(s, signature + 32);
    if (!sc_below_l(s)) return 0;
    ge a;
    if (!ge_decode(&a, public) || ge_is_small_order(&a)) return 0;
    Sha512 sha;
    unsigned char digest[64];
    sha512_init(&sha);
    sha512_update(&sha, signature, 32);
    sha512_update(&sha, public, 32);
    sha512_update(&sha, message, size);
    sha512_final(&sha, digest);
    sc_reduce512(k, digest);
    fe_neg(a.x, a.x);
    fe_neg(a.t, a.t);
    ge check;
    ge_double_scalar(&check, s, k, &a); /* [S]B + [k](-A), which must be R */
    unsigned char encoded[32];
    ge_encode(encoded, &check);
    return memcmp(encoded, signature, 32) == 0 && !ge_is_small_order(&check);
}

static PyObject *ed25519_verify(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "ed25519_verify() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_buffer views[3];
    int got = 0, ok = 0;
    for (; got < 3; got++) {
        if (PyObject_GetBuffer(args[got], &views[got], PyBUF_SIMPLE) < 0) goto done;
    }
    if (views[0].len == 32 && views[2].len == 64) {
        ok = ed25519_check(views[0].buf, views[1].buf, (size_t)views[1].len, views[2].buf);
    }
done:
    for (int i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    if (got < 3) return NULL;
    return PyBool_FromLong(ok);
}

/* for the tests: whether 32 bytes decode to a point (ed25519.decode_point(b) is not None) */
static PyObject *ed25519_decodes(PyObject *module, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    ge p;
    int ok = view.len == 32 && ge_decode(&p, view.buf);
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

static PyMethodDef hotloop_functions[] = {
    {"ed25519_decodes", ed25519_decodes, METH_O,
     "ed25519_decodes(encoded) -> bool: whether it is a canonical encoding of a point (tests)"},
    {"ed25519_verify", (PyCFunction)(void (*)(void))ed25519_verify, METH_FASTCALL,
     "ed25519_verify(public, message, signature) -> bool: ndnsci.ndn.ed25519.verify, compiled"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef hotloop_module = {
    PyModuleDef_HEAD_INIT, "_hotloop", "The consumer's compiled hot loop and Ed25519 verification.",
    -1, hotloop_functions,
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
