/*
 * response.c: filling a handler's answer -- JSON and raw bodies, Warning
 * headers, and Elasticsearch's error shapes (ElasticsearchException's
 * {"error":{"root_cause":[...],"type","reason",...},"status"} and the
 * RestController's short {"error":"...","status"}).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_error.h"
#include "response.h"

void fds__resp_raw(fds_resp *o, int status, char *body, size_t len,
                  const char *content_type)
{
    free(o->body);
    o->status = status;
    o->body = body;
    o->len = len;
    o->content_type = content_type ? content_type : "application/json";
}

void fds__resp_warn(fds_resp *o, const char *text)
{
    for (unsigned i = 0; i < o->nwarnings; i++)
        if (!strcmp(o->warnings[i], text))
            return;
    if (o->nwarnings < FDS_RESP_WARNINGS_MAX)
        o->warnings[o->nwarnings++] = text;
}

void fds__resp_json(fds_resp *o, int status, cJSON *json)
{
    char *s = json ? cJSON_PrintUnformatted(json) : NULL;
    cJSON_Delete(json);
    if (!s) {
        fds__resp_raw(o, 500, strdup("{\"error\":\"out of memory\",\"status\":500}"),
                     38, NULL);
        return;
    }
    fds__resp_raw(o, status, s, strlen(s), NULL);
}

void fds__resp_strbuf(fds_resp *o, int status, fds_strbuf *b)
{
    if (b->oom) {
        free(b->p);
        return fds__resp_errorf(o, 500, "exception", "out of memory");
    }
    fds__resp_raw(o, status, b->p, b->len, NULL);
}

/* The error object of Elasticsearch (ElasticsearchException#toXContent). */
static cJSON *error_object(const fds_err *e, const char *type, const char *hname,
                           const char *hval)
{
    cJSON *cause = cJSON_CreateObject();
    cJSON_AddStringToObject(cause, "type", type);
    cJSON_AddStringToObject(cause, "reason", e->reason[0] ? e->reason
                                                          : fds_strerror(e->code));
    if (e->index[0]) {
        cJSON_AddStringToObject(cause, "index", e->index);
        if (!strcmp(type, "index_not_found_exception")) {
            cJSON_AddStringToObject(cause, "resource.type", "index_or_alias");
            cJSON_AddStringToObject(cause, "resource.id", e->index);
        }
    }
    if (hname) /* headers the answer carries, as Elasticsearch lists them */
        cJSON_AddStringToObject(cJSON_AddObjectToObject(cause, "header"), hname, hval);
    cJSON *err = cJSON_Duplicate(cause, 1);
    if (e->cause_kind) { /* in the error, not its root_cause (as in ES) */
        cJSON *by = cJSON_AddObjectToObject(err, "caused_by");
        cJSON_AddStringToObject(by, "type", fds__http_kind_type(e->cause_kind));
        cJSON_AddStringToObject(by, "reason", e->cause);
    }
    cJSON *rc = cJSON_AddArrayToObject(err, "root_cause");
    cJSON_AddItemToArray(rc, cause);
    /* root_cause first, as Elasticsearch prints it */
    cJSON *first = cJSON_DetachItemFromObject(err, "root_cause");
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(out, "root_cause", first);
    cJSON *it = err->child;
    while (it) {
        cJSON *next = it->next;
        cJSON_AddItemToObject(out, it->string, cJSON_DetachItemViaPointer(err, it));
        it = next;
    }
    cJSON_Delete(err);
    return out;
}

cJSON *fds__error_json(const fds_err *e)
{
    return error_object(e, fds__http_type(e), NULL, NULL);
}

void fds__resp_error_as(fds_resp *o, const fds_err *e, int status,
                        const char *type, const char *hname, const char *hval)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "error", error_object(e, type, hname, hval));
    cJSON_AddNumberToObject(j, "status", status);
    fds__resp_json(o, status, j);
}

void fds__resp_error(fds_resp *o, const fds_err *e)
{
    fds__resp_error_as(o, e, fds__http_status(e), fds__http_type(e), NULL, NULL);
}

void fds__resp_errorf(fds_resp *o, int status, const char *type,
                     const char *fmt, ...)
{
    fds_err e;
    fds_err_clear(&e);
    e.code = FDS_EINVAL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.reason, sizeof e.reason, fmt, ap);
    va_end(ap);
    fds__resp_error_as(o, &e, status, type, NULL, NULL);
}

void fds__resp_simple_error(fds_resp *o, int status, const char *reason)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", reason);
    cJSON_AddNumberToObject(j, "status", status);
    fds__resp_json(o, status, j);
}
