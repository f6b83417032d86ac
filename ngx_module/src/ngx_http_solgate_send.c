/*
 * Answers the module sends itself: libcore's JSON answers, the admin and
 * metrics texts.  One sender puts a body that lives as long as the request
 * into one buffer; the JSON header sender is shared with the cache hits,
 * whose body is a file.
 */

#include "ngx_http_solgate_module.h"


static void ngx_http_solgate_free_text(void *data);


static ngx_str_t  ngx_http_solgate_json_type =
    ngx_string("application/json; charset=utf-8");


/* body points at memory that lives as long as the request */
ngx_int_t
ngx_http_solgate_send(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *content_type, u_char *body, size_t len)
{
    u_char       *semicolon;
    ngx_int_t     rc;
    ngx_buf_t    *b;
    ngx_chain_t   out;

    r->headers_out.status = status;
    r->headers_out.content_length_n = (off_t) len;
    r->headers_out.content_type = *content_type;
    r->headers_out.content_type_lowcase = NULL;

    /* the type without its parameters, as charset and gzip match it */
    semicolon = ngx_strlchr(content_type->data,
                            content_type->data + content_type->len, ';');
    r->headers_out.content_type_len = semicolon
                                      ? (size_t) (semicolon
                                                  - content_type->data)
                                      : content_type->len;

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NGX_ERROR;
    }

    b->pos = body;
    b->last = body + len;
    b->memory = len > 0;
    b->sync = len == 0;     /* nothing to say (a run of notifications) */
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


/* a header of the answer; value lives as long as the request */
ngx_int_t
ngx_http_solgate_add_header(ngx_http_request_t *r, ngx_str_t *key,
    ngx_str_t *value)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
#if (nginx_version >= 1023000)
    h->next = NULL;     /* nginx 1.23 links headers of one name */
#endif
    h->key = *key;
    h->value = *value;

    return NGX_OK;
}


/* an Allow header naming the methods a 405's endpoint takes (static) */
ngx_int_t
ngx_http_solgate_set_allow(ngx_http_request_t *r, ngx_str_t *methods)
{
    static ngx_str_t  name = ngx_string("Allow");

    return ngx_http_solgate_add_header(r, &name, methods);
}


/* a Retry-After header of `seconds` with the answer; 0: none */
ngx_int_t
ngx_http_solgate_set_retry_after(ngx_http_request_t *r, ngx_uint_t seconds)
{
    ngx_str_t         value;
    static ngx_str_t  name = ngx_string("Retry-After");

    if (seconds == 0) {
        return NGX_OK;
    }

    value.data = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
    if (value.data == NULL) {
        return NGX_ERROR;
    }

    value.len = ngx_sprintf(value.data, "%ui", seconds) - value.data;

    return ngx_http_solgate_add_header(r, &name, &value);
}


ngx_int_t
ngx_http_solgate_send_json(ngx_http_request_t *r, ngx_uint_t status,
    u_char *body, size_t len)
{
    if (status >= NGX_HTTP_BAD_REQUEST
        && ngx_http_solgate_reason(r, status, body, len) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_solgate_send(r, status, &ngx_http_solgate_json_type, body,
                                 len);
}


/*
 * An error answer's status line carries its JSON-RPC message as the
 * reason phrase ("HTTP/1.1 429 Block 5 is being retrieved ..."): some
 * clients show only that (@solana/kit: "HTTP error (429): <reason>").
 */
ngx_int_t
ngx_http_solgate_reason(ngx_http_request_t *r, ngx_uint_t status,
    u_char *body, size_t len)
{
    u_char  *line, *p;
    size_t   n;

    line = ngx_pnalloc(r->pool, NGX_INT_T_LEN + 1 + SG_MAX_REASON_PHRASE);
    if (line == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(line, "%ui ", status);
    n = sg_error_reason((const char *) body, len, (char *) p,
                        SG_MAX_REASON_PHRASE);

    if (n > 0) {
        r->headers_out.status_line.data = line;
        r->headers_out.status_line.len = (p - line) + n;
    }

    return NGX_OK;
}


/* The headers of a JSON answer whose body the caller sends. */
ngx_int_t
ngx_http_solgate_send_json_header(ngx_http_request_t *r, ngx_uint_t status,
    off_t length)
{
    r->headers_out.status = status;
    r->headers_out.content_length_n = length;
    r->headers_out.content_type = ngx_http_solgate_json_type;
    r->headers_out.content_type_len = sizeof("application/json") - 1;
    r->headers_out.content_type_lowcase = NULL;

    return ngx_http_send_header(r);
}


/*
 * A request refused before its body was read: the body discarded, libcore's
 * JSON-RPC error (static memory) answered with status.
 */
ngx_int_t
ngx_http_solgate_refuse(ngx_http_request_t *r, ngx_http_solgate_ctx_t *ctx,
    ngx_uint_t status, sg_str_t body)
{
    if (ngx_http_discard_request_body(r) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->answered = 1;

    return ngx_http_solgate_send_json(r, status, (u_char *) body.data,
                                      body.len);
}


/* A text libcore rendered: released with the request. */
ngx_int_t
ngx_http_solgate_send_text(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *content_type, sg_text_t *text)
{
    sg_text_t           *owned;
    ngx_pool_cleanup_t  *cln;

    cln = ngx_pool_cleanup_add(r->pool, sizeof(sg_text_t));
    if (cln == NULL) {
        sg_text_free(text);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    owned = cln->data;
    *owned = *text;
    cln->handler = ngx_http_solgate_free_text;

    return ngx_http_solgate_send(r, status, content_type,
                                 (u_char *) owned->data, owned->len);
}


static void
ngx_http_solgate_free_text(void *data)
{
    sg_text_free(data);
}
