/*
 * objname.c - owns the identifier rule, the subject-name rule and the
 * "ns.name" syntax.
 */
#include "catalog/objname.h"

#include <stdio.h>
#include <string.h>

#include <loams/status.h>

static int ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int ident_char(unsigned char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

int loams_ident_valid(const char *text, size_t len)
{
    if (text == NULL || len == 0 || len > LOAMS_IDENT_MAX || !ident_start((unsigned char)text[0])) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if (!ident_char((unsigned char)text[i])) {
            return 0;
        }
    }
    return 1;
}

static void fold_copy(char *dst, const char *src, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        dst[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    dst[len] = '\0';
}

static int bad_part(const char *what, const char *text, size_t len, char *msg, size_t msg_size)
{
    if (msg_size > 0) {
        if (len == 0) {
            snprintf(msg, msg_size, "the %s is empty: a name is written ns.name or name", what);
        } else if (len > LOAMS_IDENT_MAX) {
            snprintf(msg, msg_size, "the %s '%.*s...' is longer than %d characters", what, 40, text,
                     LOAMS_IDENT_MAX);
        } else {
            snprintf(msg, msg_size,
                     "the %s '%.*s' is not an identifier: use letters, digits and '_', "
                     "starting with a letter or '_'",
                     what, (int)len, text);
        }
    }
    return LOAMS_EINPUT;
}

int loams_objname_set(loams_objname *out, const char *ns, const char *name, char *msg,
                      size_t msg_size)
{
    if (ns == NULL || ns[0] == '\0') {
        ns = LOAMS_DEFAULT_NS;
    }
    if (name == NULL) {
        name = "";
    }
    size_t nl = strlen(ns), ml = strlen(name);
    if (!loams_ident_valid(ns, nl)) {
        return bad_part("namespace", ns, nl, msg, msg_size);
    }
    if (!loams_ident_valid(name, ml)) {
        return bad_part("name", name, ml, msg, msg_size);
    }
    fold_copy(out->ns, ns, nl);
    fold_copy(out->name, name, ml);
    return 0;
}

int loams_objname_parse(const char *text, loams_objname *out, char *msg, size_t msg_size)
{
    if (text == NULL) {
        text = "";
    }
    const char *dot = strchr(text, '.');
    if (dot == NULL) {
        return loams_objname_set(out, NULL, text, msg, msg_size);
    }
    size_t nl = (size_t)(dot - text);
    const char *name = dot + 1;
    size_t ml = strlen(name);
    if (!loams_ident_valid(text, nl)) {
        return bad_part("namespace", text, nl, msg, msg_size);
    }
    if (!loams_ident_valid(name, ml)) {
        return bad_part("name", name, ml, msg, msg_size);
    }
    fold_copy(out->ns, text, nl);
    fold_copy(out->name, name, ml);
    return 0;
}

static int subject_char(unsigned char c)
{
    return ident_char(c) || c == '-' || c == '.';
}

int loams_subject_name_valid(const char *text, size_t len)
{
    if (text == NULL || len == 0 || len > LOAMS_IDENT_MAX ||
        !(ident_char((unsigned char)text[0]))) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if (!subject_char((unsigned char)text[i])) {
            return 0;
        }
    }
    return 1;
}

static int bad_subject(const char *text, size_t len, char *msg, size_t msg_size)
{
    if (msg_size > 0) {
        if (len == 0) {
            snprintf(msg, msg_size, "the subject name is empty: a subject is written ns.subject");
        } else if (len > LOAMS_IDENT_MAX) {
            snprintf(msg, msg_size, "the subject name '%.*s...' is longer than %d characters", 40,
                     text, LOAMS_IDENT_MAX);
        } else {
            snprintf(msg, msg_size,
                     "the subject name '%.*s' is not valid: use letters, digits, '_', '-' and "
                     "'.', starting with a letter, a digit or '_'",
                     (int)len, text);
        }
    }
    return LOAMS_EINPUT;
}

int loams_subject_set(loams_objname *out, const char *ns, const char *subject, char *msg,
                      size_t msg_size)
{
    if (ns == NULL || ns[0] == '\0') {
        ns = LOAMS_DEFAULT_NS;
    }
    if (subject == NULL) {
        subject = "";
    }
    size_t nl = strlen(ns), sl = strlen(subject);
    if (!loams_ident_valid(ns, nl)) {
        return bad_part("namespace", ns, nl, msg, msg_size);
    }
    if (!loams_subject_name_valid(subject, sl)) {
        return bad_subject(subject, sl, msg, msg_size);
    }
    fold_copy(out->ns, ns, nl);
    fold_copy(out->name, subject, sl);
    return 0;
}

int loams_subject_parse(const char *text, loams_objname *out, char *msg, size_t msg_size)
{
    if (text == NULL) {
        text = "";
    }
    const char *dot = strchr(text, '.');
    if (dot == NULL) {
        return loams_subject_set(out, NULL, text, msg, msg_size);
    }
    size_t nl = (size_t)(dot - text);
    if (!loams_ident_valid(text, nl)) {
        return bad_part("namespace", text, nl, msg, msg_size);
    }
    char ns[LOAMS_IDENT_MAX + 1];
    memcpy(ns, text, nl);
    ns[nl] = '\0';
    return loams_subject_set(out, ns, dot + 1, msg, msg_size);
}
