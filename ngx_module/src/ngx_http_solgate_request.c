/*
 * What the module reads from a client request for libcore: the body as one
 * range of bytes, request headers, URL-decoded query arguments; and the
 * wall clock libcore is given with them.  And the one header it sets for
 * nodes, Content-Type.
 */

#include "ngx_http_solgate_module.h"


static size_t ngx_http_solgate_unescape(ngx_str_t *raw,
    ngx_uint_t plus_is_space, u_char *out);


/*
 * The request body as one contiguous range, read back from a temp file
 * when nginx spilled it there.
 */
ngx_int_t
ngx_http_solgate_body_bytes(ngx_http_request_t *r, u_char **data,
    size_t *len)
{
    off_t                      size;
    ssize_t                    n;
    ngx_buf_t                 *b;
    ngx_chain_t               *cl;
    ngx_http_request_body_t   *rb;

    rb = r->request_body;

    if (rb == NULL || rb->bufs == NULL) {
        *data = (u_char *) "";
        *len = 0;
        return NGX_OK;
    }

    b = rb->bufs->buf;

    if (rb->bufs->next == NULL && ngx_buf_in_memory(b)) {
        *data = b->pos;
        *len = b->last - b->pos;
        return NGX_OK;
    }

    size = 0;

    for (cl = rb->bufs; cl; cl = cl->next) {
        size += ngx_buf_size(cl->buf);
    }

    *data = ngx_pnalloc(r->pool, (size_t) size + 1);
    if (*data == NULL) {
        return NGX_ERROR;
    }

    n = ngx_http_solgate_chain_copy(rb->bufs, *data, (size_t) size);

    if (n != (ssize_t) size) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "solgate: could not read the request body "
                      "(%O bytes)", size);
        return NGX_ERROR;
    }

    *len = (size_t) size;

    return NGX_OK;
}


/* The first request header called `name` (in lower case), or NULL. */
ngx_table_elt_t *
ngx_http_solgate_find_header(ngx_http_request_t *r, ngx_str_t *name)
{
    ngx_table_elt_t  *found;

    ngx_http_solgate_find_in_list(&r->headers_in.headers, name, &found, NULL,
                                  1);

    return found;
}


/*
 * found[k]: the first header of the list called names[k], a name in lower
 * case: compared with the lowcase_key nginx keeps of each header, a plain
 * compare where a case-insensitive one costs ten times more; one pass.  With
 * count, count[k] is how many there are, and the pass reads the whole list;
 * without, it stops once each name is found.
 */
void
ngx_http_solgate_find_in_list(ngx_list_t *headers, ngx_str_t *names,
    ngx_table_elt_t **found, ngx_uint_t *count, ngx_uint_t n)
{
    size_t            len;
    uint64_t          lengths;
    ngx_uint_t        i, k, missing;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    lengths = 0;    /* bit L % 64: a name is L bytes long */

    for (k = 0; k < n; k++) {
        found[k] = NULL;
        lengths |= (uint64_t) 1 << (names[k].len % 64);

        if (count != NULL) {
            count[k] = 0;
        }
    }

    missing = n;

    for (part = &headers->part; part != NULL; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            len = h[i].key.len;     /* once: count[] might alias it */

            if (!((lengths >> (len % 64)) & 1)) {
                continue;           /* most headers: no name this long */
            }

            for (k = 0; k < n; k++) {
                if (len != names[k].len
                    || ngx_strncmp(h[i].lowcase_key, names[k].data, len) != 0)
                {
                    continue;
                }

                if (found[k] == NULL) {
                    found[k] = &h[i];
                    missing--;
                }

                if (count != NULL) {
                    count[k]++;

                } else if (missing == 0) {
                    return;
                }

                break;
            }
        }
    }
}


/*
 * The request's Content-Type as Solana nodes take it, application/json,
 * whatever the client sent (curl -d sends a form's) or when it sent none:
 * proxy_pass passes the client's header on.
 */
ngx_int_t
ngx_http_solgate_json_content_type(ngx_http_request_t *r)
{
    ngx_table_elt_t  *h;

    static ngx_str_t  json = ngx_string("application/json");

    h = r->headers_in.content_type;

    if (h != NULL) {
        /* set, not compared: as cheap, and any case or parameter goes */
        h->value = json;
        return NGX_OK;
    }

    h = ngx_list_push(&r->headers_in.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    ngx_str_set(&h->key, "Content-Type");
    h->lowcase_key = (u_char *) "content-type";
    h->hash = ngx_hash_key(h->lowcase_key, h->key.len);
#if (nginx_version >= 1023000)
    h->next = NULL;     /* nginx 1.23 links headers of one name */
#endif
    h->value = json;

    r->headers_in.content_type = h;

    return NGX_OK;
}


/*
 * A query argument, URL-decoded into request memory; plus_is_space: '+'
 * is a space (form encoding), while "%2B" stays a '+'.  NGX_DECLINED when
 * the argument is absent.  With twice, *twice says whether the arguments
 * name it again after the first.
 */
ngx_int_t
ngx_http_solgate_query_arg(ngx_http_request_t *r, char *name,
    ngx_uint_t plus_is_space, ngx_str_t *value, ngx_uint_t *twice)
{
    size_t      len;
    ngx_str_t   raw, again, args;

    if (r->args.len == 0) {
        return NGX_DECLINED;    /* most requests: no query string to search */
    }

    len = ngx_strlen(name);

    if (ngx_http_arg(r, (u_char *) name, len, &raw) != NGX_OK) {
        return NGX_DECLINED;
    }

    if (twice != NULL) {
        /* ngx_http_arg reads r->args: the ones after the first, a moment */
        args = r->args;
        r->args.data = raw.data + raw.len;
        r->args.len = args.data + args.len - r->args.data;

        *twice = ngx_http_arg(r, (u_char *) name, len, &again) == NGX_OK;

        r->args = args;
    }

    value->data = ngx_pnalloc(r->pool, raw.len);
    if (value->data == NULL) {
        return NGX_ERROR;
    }

    value->len = ngx_http_solgate_unescape(&raw, plus_is_space, value->data);

    return NGX_OK;
}


/*
 * A query value decoded into out (raw.len bytes at most): %XX as the byte,
 * '+' as a space when plus_is_space ("%2B" stays a '+'), and a '%' not
 * followed by two hex digits kept as it is, where nginx's unescape drops
 * it ("%ZZ" would read as "ZZ", a selector the client never sent).
 */
static size_t
ngx_http_solgate_unescape(ngx_str_t *raw, ngx_uint_t plus_is_space,
    u_char *out)
{
    u_char  *p, *end, *dst;

    end = raw->data + raw->len;
    dst = out;

    for (p = raw->data; p < end; p++) {
        if (*p == '%' && end - p >= 3 && isxdigit(p[1]) && isxdigit(p[2])) {
            *dst++ = (u_char) ngx_hextoi(p + 1, 2);
            p += 2;

        } else {
            *dst++ = (plus_is_space && *p == '+') ? ' ' : *p;
        }
    }

    return dst - out;
}


int64_t
ngx_http_solgate_wall_ms(void)
{
    ngx_time_t  *tp;

    tp = ngx_timeofday();

    return (int64_t) tp->sec * 1000 + tp->msec;
}


/*
 * What a page or a check takes: GET or HEAD, any body discarded.  NGX_OK,
 * or the status to finalize with.
 */
ngx_int_t
ngx_http_solgate_read_only(ngx_http_request_t *r)
{
    static ngx_str_t  get = ngx_string("GET, HEAD");

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        return ngx_http_solgate_set_allow(r, &get) == NGX_OK
               ? NGX_HTTP_NOT_ALLOWED : NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_discard_request_body(r);
}
