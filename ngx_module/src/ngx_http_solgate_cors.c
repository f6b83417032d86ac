/*
 * Cross-origin calls from a browser, answered as a Solana node answers
 * them (agave's RPC server allows any origin): a preflight OPTIONS gets a
 * 204 that allows POST with whatever headers the page asks for
 * (@solana/web3.js sends its own "solana-client"), and every answer to a
 * call that came with an Origin carries "Access-Control-Allow-Origin: *"
 * once: a node's answer already has it, the answers Solgate writes itself
 * (local answers, cache hits, errors, merged batches) get it here.
 * solgate_cors off leaves both to the operator's configuration.
 */

#include "ngx_http_solgate_module.h"


static ngx_str_t  ngx_http_solgate_allow_origin_name =
    ngx_string("Access-Control-Allow-Origin");
static ngx_str_t  ngx_http_solgate_any_origin = ngx_string("*");


/*
 * An OPTIONS to a JSON-RPC location; NGX_DECLINED with solgate_cors off.
 * ctx->cors_origin is set (ngx_http_solgate_cors_origin): the header
 * filter adds the Access-Control-Allow-Origin of a browser's preflight.
 */
ngx_int_t
ngx_http_solgate_cors_preflight(ngx_http_request_t *r,
    ngx_http_solgate_ctx_t *ctx)
{
    ngx_table_elt_t              *asked;
    ngx_http_solgate_loc_conf_t  *slcf;

    static ngx_str_t  asked_name =
                          ngx_string("access-control-request-headers");
    static ngx_str_t  methods = ngx_string("POST, OPTIONS");
    static ngx_str_t  allow_methods =
                          ngx_string("Access-Control-Allow-Methods");
    static ngx_str_t  allow_headers =
                          ngx_string("Access-Control-Allow-Headers");
    static ngx_str_t  max_age = ngx_string("Access-Control-Max-Age");
    static ngx_str_t  a_day = ngx_string("86400");
    static ngx_str_t  no_type = ngx_null_string;

    slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

    if (!slcf->cors) {
        return NGX_DECLINED;
    }

    if (ngx_http_discard_request_body(r) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_solgate_set_allow(r, &methods) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ctx->cors_origin) {
        asked = ngx_http_solgate_find_header(r, &asked_name);

        if (ngx_http_solgate_add_header(r, &allow_methods, &methods) != NGX_OK
            || ngx_http_solgate_add_header(r, &max_age, &a_day) != NGX_OK
            || (asked != NULL
                && ngx_http_solgate_add_header(r, &allow_headers,
                                               &asked->value)
                   != NGX_OK))
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    ctx->answered = 1;

    /* a 204 has no body, nor a type */
    return ngx_http_solgate_send(r, NGX_HTTP_NO_CONTENT, &no_type, NULL, 0);
}


/* A request Solgate answers a browser's way: solgate_cors on, an Origin */
ngx_uint_t
ngx_http_solgate_cors_origin(ngx_http_request_t *r)
{
    ngx_http_solgate_loc_conf_t  *slcf;

    static ngx_str_t  name = ngx_string("origin");

    slcf = ngx_http_get_module_loc_conf(r, ngx_http_solgate_module);

    return slcf->cors && ngx_http_solgate_find_header(r, &name) != NULL;
}


/* The answer to a call that came with an Origin: allowed, once */
ngx_int_t
ngx_http_solgate_cors_allow_origin(ngx_http_request_t *r)
{
    ngx_uint_t        i;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    for (part = &r->headers_out.headers.part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (h[i].hash != 0
                && h[i].key.len == ngx_http_solgate_allow_origin_name.len
                && ngx_strncasecmp(h[i].key.data,
                                   ngx_http_solgate_allow_origin_name.data,
                                   h[i].key.len)
                   == 0)
            {
                return NGX_OK;
            }
        }
    }

    return ngx_http_solgate_add_header(r, &ngx_http_solgate_allow_origin_name,
                                       &ngx_http_solgate_any_origin);
}
