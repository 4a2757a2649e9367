/* A publish's preparing work, compiled: see ndnsci/catalog/ingest.py (_tree_rows).
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

static PyMethodDef prepare_methods[] = {
    {"tree_rows", tree_rows, METH_O,
     "tree_rows(parents) -> the tree count deltas of ingest._tree_rows, or None (ask Python)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef prepare_module = {
    PyModuleDef_HEAD_INIT, "_prepare", "A publish's preparing work, compiled.", -1, prepare_methods,
};

PyMODINIT_FUNC PyInit__prepare(void) { return PyModule_Create(&prepare_module); }
