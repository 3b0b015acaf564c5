/*
 * keylist.c - owns the list of object keys (keylist.h).
 */
#include "abi/keylist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct loams_keylist {
    char **keys;
    size_t n;
    size_t cap;
};

int loams_keylist_create(loams_keylist **out)
{
    loams_keylist *l = calloc(1, sizeof *l);
    if (l == NULL) {
        return -ENOMEM;
    }
    *out = l;
    return 0;
}

void loams_keylist_truncate(loams_keylist *l, size_t n)
{
    for (size_t i = n; i < l->n; i++) {
        free(l->keys[i]);
    }
    if (n < l->n) {
        l->n = n;
    }
}

void loams_keylist_clear(loams_keylist *l)
{
    loams_keylist_truncate(l, 0);
}

void loams_keylist_free(loams_keylist *l)
{
    if (l != NULL) {
        loams_keylist_clear(l);
        free(l->keys);
        free(l);
    }
}

int loams_keylist_add(loams_keylist *l, const char *key)
{
    if (key == NULL) {
        return -EINVAL;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap < 16 ? 16 : l->cap * 2;
        char **keys = realloc(l->keys, cap * sizeof *keys);
        if (keys == NULL) {
            return -ENOMEM;
        }
        l->keys = keys;
        l->cap = cap;
    }
    char *copy = strdup(key);
    if (copy == NULL) {
        return -ENOMEM;
    }
    l->keys[l->n++] = copy;
    return 0;
}

size_t loams_keylist_count(const loams_keylist *l)
{
    return l->n;
}

const char *loams_keylist_at(const loams_keylist *l, size_t i)
{
    return i < l->n ? l->keys[i] : NULL;
}
