/* A publish's per-row work, compiled: see catalog/ndnsci_catalog/ingest.py (_tree_rows, _new_rows).
 *
 * tree_rows(parents) gives what ingest._tree_python gives for the same dict (directory path ->
 * files added, negative when removed): the count deltas of every prefix of those paths, one
 * (parent, component, files, leaves) tuple per node whose count changes, in path order. With
 * names that share few directories (a batch of random names: 2.5 nodes per name) the Python
 * walk is a sixth of the preparing process's time; this is the same walk over the paths' bytes.
 *
 * It takes ASCII paths only (canonical NDN names escape everything else) and deltas that fit
 * in 32 bits, of paths from the root ("/..."); for anything else it returns None and the caller walks in Python.
 * tests/catalog/test_tree_rows.py checks both against each other.
 *
 * new_rows(...) makes the files rows of a batch whose names are all new, as
 * ingest._new_rows_python does: the server's per-row Python of an optimistic write (about a
 * twentieth of its work per record). tests/catalog/test_new_rows.py checks both.
 *
 * document(name, facets, original, original_path) is fulltext.document's free-text document of
 * a record without metadata, for ASCII text: the preparing process's largest per-record step in
 * Python. None for anything else (the caller asks Python). tests/catalog/test_document.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *text; /* the path's ASCII characters; the walk reads path + "/" */
    Py_ssize_t size;  /* without the virtual "/" */
    long long delta;
} Path;

typedef struct {
    Py_ssize_t end; /* the node's prefix is the current path's first `end` characters (with its "/") */
    long long files, leaves;
    Py_ssize_t row; /* its place in the output */
} Node;

/* the character i of path + "/" */
static inline char at(const Path *p, Py_ssize_t i) { return i < p->size ? p->text[i] : '/'; }

/* sorts as Python sorts the strings path + "/" (code points: byte order, in ASCII) */
static int compare(const void *a, const void *b) {
    const Path *x = a, *y = b;
    Py_ssize_t common = x->size < y->size ? x->size : y->size;
    int order = memcmp(x->text, y->text, (size_t)common);
    if (order) return order;
    /* one is a prefix of the other (keys are distinct: never both ends) */
    for (Py_ssize_t i = common; i <= x->size || i <= y->size; i++) {
        unsigned char cx = (unsigned char)at(x, i), cy = (unsigned char)at(y, i);
        if (i > x->size) return -1; /* x + "/" ended first */
        if (i > y->size) return 1;
        if (cx != cy) return cx < cy ? -1 : 1;
    }
    return 0;
}

/* does path + "/" start with the first `end` characters of previous + "/"? */
static int starts_with(const Path *path, const Path *previous, Py_ssize_t end) {
    if (path->size + 1 < end) return 0;
    Py_ssize_t plain = end - 1; /* a prefix ends with "/": compare the rest as bytes */
    if (plain > path->size || plain > previous->size) {
        for (Py_ssize_t i = 0; i < end; i++) {
            if (at(path, i) != at(previous, i)) return 0;
        }
        return 1;
    }
    return memcmp(path->text, previous->text, (size_t)plain) == 0 && at(path, plain) == '/' &&
           at(previous, plain) == '/';
}

/* closes the top node (its prefix is `path`'s first `end` characters): its row, if its count
 * changed, and its files added to its parent's. 0, or -1 with an exception set. */
static int close_node(Node *stack, Py_ssize_t *depth, const Path *path, PyObject *rows) {
    Node node = stack[--*depth];
    if (!node.files) return 0;
    /* the prefix without its "/": parent before the last "/", component after it */
    Py_ssize_t last = node.end - 2;
    while (last >= 0 && at(path, last) != '/') last--;
    /* last >= 0: every prefix starts with "/" */
    PyObject *parent = NULL, *component = NULL, *files = NULL, *leaves = NULL;
    char buffer[256];
    char *copy = node.end <= (Py_ssize_t)sizeof(buffer) ? buffer : PyMem_Malloc((size_t)node.end);
    if (copy == NULL) return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < node.end; i++) copy[i] = at(path, i);
    parent = PyUnicode_FromStringAndSize(copy, last);
    component = PyUnicode_FromStringAndSize(copy + last + 1, node.end - 2 - last);
    if (copy != buffer) PyMem_Free(copy);
    files = PyLong_FromLongLong(node.files);
    leaves = PyLong_FromLongLong(node.leaves);
    PyObject *row = NULL;
    if (parent && component && files && leaves) row = PyTuple_Pack(4, parent, component, files, leaves);
    Py_XDECREF(parent);
    Py_XDECREF(component);
    Py_XDECREF(files);
    Py_XDECREF(leaves);
    if (row == NULL) return -1;
    Py_DECREF(PyList_GET_ITEM(rows, node.row)); /* the placeholder None */
    PyList_SET_ITEM(rows, node.row, row);       /* steals the reference */
    if (*depth) stack[*depth - 1].files += node.files;
    return 0;
}

static PyObject *tree_rows(PyObject *self, PyObject *parents) {
    if (!PyDict_Check(parents)) Py_RETURN_NONE; /* another mapping: the Python walk */
    Py_ssize_t count = PyDict_GET_SIZE(parents), n = 0, position = 0;
    PyObject *key, *value;
    Path *paths = PyMem_Malloc(sizeof(Path) * (size_t)(count ? count : 1));
    if (paths == NULL) return PyErr_NoMemory();
    Py_ssize_t longest = 0;
    while (PyDict_Next(parents, &position, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || !PyUnicode_IS_ASCII(key) || !PyLong_CheckExact(value)) {
            PyMem_Free(paths);
            Py_RETURN_NONE; /* the Python walk */
        }
        int overflow = 0;
        long long delta = PyLong_AsLongLongAndOverflow(value, &overflow);
        /* counts of a batch: sums of them stay far from overflowing */
        if (overflow || delta > (1LL << 32) || delta < -(1LL << 32) || count > (1 << 28)) {
            PyMem_Free(paths);
            Py_RETURN_NONE;
        }
        if (!delta) continue;
        if (!PyUnicode_GET_LENGTH(key) || PyUnicode_READ_CHAR(key, 0) != '/') {
            PyMem_Free(paths); /* not a path from the root: as the Python walk takes it */
            Py_RETURN_NONE;
        }
        Path *p = &paths[n++];
        p->text = (const char *)PyUnicode_DATA(key);
        p->size = PyUnicode_GET_LENGTH(key);
        p->delta = delta;
        if (p->size > longest) longest = p->size;
    }
    qsort(paths, (size_t)n, sizeof(Path), compare);
    /* a node per "/" of path + "/", at most */
    Node *stack = PyMem_Malloc(sizeof(Node) * (size_t)(longest + 2));
    PyObject *rows = PyList_New(0);
    if (stack == NULL || rows == NULL) {
        PyMem_Free(paths);
        PyMem_Free(stack);
        Py_XDECREF(rows);
        return PyErr_NoMemory();
    }
    Py_ssize_t depth = 0;
    const Path *previous = NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        const Path *path = &paths[k];
        while (depth && !starts_with(path, previous, stack[depth - 1].end)) {
            if (close_node(stack, &depth, previous, rows) < 0) goto failed;
        }
        Py_ssize_t opened = depth ? stack[depth - 1].end : 1; /* "/" : the root, never a node */
        /* a node for each "/" after the open prefix: the components of path + "/" past it */
        for (Py_ssize_t i = opened; i <= path->size; i++) {
            if (at(path, i) != '/') continue;
            stack[depth].end = i + 1;
            stack[depth].files = stack[depth].leaves = 0;
            stack[depth].row = PyList_GET_SIZE(rows);
            if (PyList_Append(rows, Py_None) < 0) goto failed;
            depth++;
        }
        if (!depth) { /* a path "/": the Python walk says what is wrong with it */
            PyMem_Free(paths);
            PyMem_Free(stack);
            Py_DECREF(rows);
            Py_RETURN_NONE;
        }
        stack[depth - 1].files += path->delta;
        stack[depth - 1].leaves += path->delta;
        previous = path;
    }
    while (depth) {
        if (close_node(stack, &depth, previous, rows) < 0) goto failed;
    }
    PyMem_Free(paths);
    PyMem_Free(stack);
    /* the rows of nodes whose count did not change are still the placeholder None */
    Py_ssize_t kept = 0, total = PyList_GET_SIZE(rows);
    for (Py_ssize_t i = 0; i < total; i++) {
        if (PyList_GET_ITEM(rows, i) != Py_None) kept++;
    }
    PyObject *out = PyList_New(kept);
    if (out == NULL) {
        Py_DECREF(rows);
        return NULL;
    }
    for (Py_ssize_t i = 0, j = 0; i < total; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (row != Py_None) {
            Py_INCREF(row);
            PyList_SET_ITEM(out, j++, row);
        }
    }
    Py_DECREF(rows);
    return out;
failed:
    PyMem_Free(paths);
    PyMem_Free(stack);
    Py_DECREF(rows);
    return NULL;
}

/* the int64 `value` little-endian at `out` (files.packed's head: bulk.HEAD) */
static inline void put_le64(char *out, long long value) {
    unsigned long long bits = (unsigned long long)value;
    for (int i = 0; i < 8; i++) out[i] = (char)(bits >> (8 * i));
}

/* an exact int of 64 bits, else -1 with *ok = 0 (no exception left set) */
static inline long long int64_of(PyObject *value, int *ok) {
    if (!PyLong_CheckExact(value)) return *ok = 0, -1;
    int overflow = 0;
    long long result = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || (result == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return *ok = 0, -1;
    }
    return result;
}

/* new_rows(rows, codes, facet_ids, offsets, site_ref, first_id, first_seq, stamp, site): per row
 * k, (*rows[k], first_id + k, packed, first_seq + k, stamp, site) where packed is bulk.HEAD of
 * (id, seq, *codes[k]) + facet_ids[4 * offsets[k] : 4 * offsets[k + 1]] + site_ref. None when the
 * arguments are not the plain lists, tuples, ints and bytes of ingest.Prepared: Python makes them. */
static PyObject *new_rows(PyObject *self, PyObject *args) {
    PyObject *rows, *codes, *offsets, *stamp, *site;
    Py_buffer ids, site_ref;
    long long first_id, first_seq;
    if (!PyArg_ParseTuple(args, "O!O!y*O!y*LLOO:new_rows", &PyList_Type, &rows, &PyList_Type,
                          &codes, &ids, &PyList_Type, &offsets, &site_ref, &first_id, &first_seq,
                          &stamp, &site))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows);
    int ok = PyList_GET_SIZE(codes) == n && PyList_GET_SIZE(offsets) == n + 1 &&
             first_id >= 0 && first_seq >= 0 && first_id < (1LL << 62) - n &&
             first_seq < (1LL << 62) - n;
    if (ok) out = PyList_New(n);
    if (ok && out == NULL) goto done;
    Py_ssize_t start = ok ? (Py_ssize_t)int64_of(PyList_GET_ITEM(offsets, 0), &ok) : 0;
    for (Py_ssize_t k = 0; ok && k < n; k++) {
        PyObject *row = PyList_GET_ITEM(rows, k), *code = PyList_GET_ITEM(codes, k);
        Py_ssize_t end = (Py_ssize_t)int64_of(PyList_GET_ITEM(offsets, k + 1), &ok);
        if (!ok || !PyTuple_CheckExact(row) || !PyTuple_CheckExact(code) ||
            PyTuple_GET_SIZE(code) != 3 || start < 0 || end < start || end > ids.len / 4) {
            ok = 0;
            break;
        }
        long long head[5] = {first_id + k, first_seq + k, 0, 0, 0};
        for (int i = 0; i < 3; i++) head[2 + i] = int64_of(PyTuple_GET_ITEM(code, i), &ok);
        if (!ok) break;
        Py_ssize_t facets = 4 * (end - start);
        PyObject *packed = PyBytes_FromStringAndSize(NULL, 40 + facets + site_ref.len);
        if (packed == NULL) goto failed;
        char *bytes = PyBytes_AS_STRING(packed);
        for (int i = 0; i < 5; i++) put_le64(bytes + 8 * i, head[i]);
        memcpy(bytes + 40, (const char *)ids.buf + 4 * start, (size_t)facets);
        memcpy(bytes + 40 + facets, site_ref.buf, (size_t)site_ref.len);
        Py_ssize_t width = PyTuple_GET_SIZE(row);
        PyObject *made = PyTuple_New(width + 5);
        PyObject *id = PyLong_FromLongLong(head[0]), *seq = PyLong_FromLongLong(head[1]);
        if (made == NULL || id == NULL || seq == NULL) {
            Py_XDECREF(made);
            Py_XDECREF(id);
            Py_XDECREF(seq);
            Py_DECREF(packed);
            goto failed;
        }
        for (Py_ssize_t i = 0; i < width; i++) {
            PyObject *item = PyTuple_GET_ITEM(row, i);
            Py_INCREF(item);
            PyTuple_SET_ITEM(made, i, item);
        }
        Py_INCREF(stamp);
        Py_INCREF(site);
        PyTuple_SET_ITEM(made, width, id); /* each SET steals its reference */
        PyTuple_SET_ITEM(made, width + 1, packed);
        PyTuple_SET_ITEM(made, width + 2, seq);
        PyTuple_SET_ITEM(made, width + 3, stamp);
        PyTuple_SET_ITEM(made, width + 4, site);
        PyList_SET_ITEM(out, k, made);
        start = end;
    }
    if (!ok) { /* something unexpected: the Python rows */
        Py_XDECREF(out);
        out = Py_None;
        Py_INCREF(out);
    }
    goto done;
failed:
    Py_CLEAR(out);
done:
    PyBuffer_Release(&ids);
    PyBuffer_Release(&site_ref);
    return out;
}

/* fulltext.MAX_TOKENS: a document keeps its first tokens */
#define MAX_TOKENS 2000
/* sources beyond this many: Python dedups them (a record has a few tens) */
#define MAX_SOURCES 256

typedef struct {
    const char *text;
    Py_ssize_t size;
} Text;

typedef struct {
    Text items[MAX_SOURCES];
    int count;
    int declined; /* non-ASCII text, too many sources: Python makes the document */
} Sources;

/* adds `text` unless an equal source is in (dict.setdefault over the sources, in order) */
static void add_source(Sources *sources, const char *text, Py_ssize_t size) {
    for (int i = 0; i < sources->count; i++) {
        const Text *known = &sources->items[i];
        if (known->size == size && memcmp(known->text, text, (size_t)size) == 0) return;
    }
    if (sources->count == MAX_SOURCES) {
        sources->declined = 1;
        return;
    }
    sources->items[sources->count].text = text;
    sources->items[sources->count++].size = size;
}

/* a str source: ASCII only (its bytes are its characters) */
static void add_string(Sources *sources, PyObject *text) {
    if (!PyUnicode_CheckExact(text) || !PyUnicode_IS_ASCII(text)) {
        sources->declined = 1;
        return;
    }
    add_source(sources, (const char *)PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text));
}

/* each "/"-separated part of `text` (from `from`) as a source */
static void add_parts(Sources *sources, PyObject *text, Py_ssize_t from) {
    if (!PyUnicode_CheckExact(text) || !PyUnicode_IS_ASCII(text)) {
        sources->declined = 1;
        return;
    }
    const char *chars = (const char *)PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text), start = from;
    for (Py_ssize_t i = from; i <= size && !sources->declined; i++) {
        if (i == size || chars[i] == '/') {
            add_source(sources, chars + start, i - start);
            start = i + 1;
        }
    }
}

static PyObject *document(PyObject *self, PyObject *args) {
    PyObject *name, *facets, *original, *original_path;
    if (!PyArg_ParseTuple(args, "OOOO:document", &name, &facets, &original, &original_path))
        return NULL;
    Sources *sources = PyMem_Malloc(sizeof(Sources));
    if (sources == NULL) return PyErr_NoMemory();
    sources->count = sources->declined = 0;
    /* the name's components (ingest: name_components): a canonical name with nothing escaped
     * and no all-period component splits plainly; the others are unescaped by Python */
    if (!PyUnicode_CheckExact(name) || !PyUnicode_IS_ASCII(name) || !PyUnicode_GET_LENGTH(name) ||
        PyUnicode_READ_CHAR(name, 0) != '/' || !PyDict_CheckExact(facets)) {
        sources->declined = 1;
    } else {
        const char *chars = (const char *)PyUnicode_DATA(name);
        Py_ssize_t size = PyUnicode_GET_LENGTH(name);
        for (Py_ssize_t i = 0; i < size; i++) {
            if (chars[i] == '%' || (chars[i] == '/' && i + 1 < size && chars[i + 1] == '.')) {
                sources->declined = 1;
                break;
            }
        }
        if (!sources->declined) add_parts(sources, name, 1);
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (!sources->declined && PyDict_Next(facets, &position, &key, &value)) {
        if (value != Py_None) add_string(sources, value);
    }
    /* `original` when not empty, the parts of `original_path` when given and not empty */
    if (!sources->declined && original != Py_None) {
        if (!PyUnicode_CheckExact(original)) sources->declined = 1;
        else if (PyUnicode_GET_LENGTH(original)) add_string(sources, original);
    }
    if (!sources->declined && original_path != Py_None) {
        if (!PyUnicode_CheckExact(original_path)) sources->declined = 1;
        else if (PyUnicode_GET_LENGTH(original_path)) add_parts(sources, original_path, 0);
    }
    if (sources->declined) {
        PyMem_Free(sources);
        Py_RETURN_NONE;
    }
    /* the tokens (fulltext.tokens: runs of ASCII letters and digits, lower-cased) of the
     * sources joined by spaces, the first MAX_TOKENS of them, joined by single spaces */
    Py_ssize_t total = 0;
    for (int i = 0; i < sources->count; i++) total += sources->items[i].size + 1;
    char *out = PyMem_Malloc((size_t)(total ? total : 1));
    if (out == NULL) {
        PyMem_Free(sources);
        return PyErr_NoMemory();
    }
    Py_ssize_t length = 0;
    int tokens = 0, inside = 0;
    for (int i = 0; i < sources->count && tokens < MAX_TOKENS; i++) {
        const Text *source = &sources->items[i];
        for (Py_ssize_t j = 0; j <= source->size; j++) {
            char c = j < source->size ? source->text[j] : ' '; /* a space ends each source */
            int word = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
            if (word) {
                if (!inside) {
                    if (tokens == MAX_TOKENS) break;
                    if (tokens) out[length++] = ' ';
                    tokens++;
                    inside = 1;
                }
                out[length++] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
            } else {
                inside = 0;
            }
        }
        inside = 0;
    }
    PyObject *text = PyUnicode_FromStringAndSize(out, length);
    PyMem_Free(out);
    PyMem_Free(sources);
    return text;
}

static PyMethodDef prepare_methods[] = {
    {"tree_rows", tree_rows, METH_O,
     "tree_rows(parents) -> the tree count deltas of ingest._tree_rows, or None (ask Python)"},
    {"new_rows", new_rows, METH_VARARGS,
     "new_rows(rows, codes, facet_ids, offsets, site_ref, first_id, first_seq, stamp, site) -> "
     "the files rows of ingest._new_rows, or None (ask Python)"},
    {"document", document, METH_VARARGS,
     "document(name, facets, original, original_path) -> fulltext.document's text of a record "
     "without metadata, or None (ask Python)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef prepare_module = {
    PyModuleDef_HEAD_INIT, "_prepare", "A publish's per-row work, compiled.", -1, prepare_methods,
};

PyMODINIT_FUNC PyInit__prepare(void) { return PyModule_Create(&prepare_module); }
