/*
 * solgate_admin: GET .../state (every network's slot views, health,
 * cordons, leases, tips as JSON), POST .../cordon?upstream=ID&reason=TEXT
 * and POST .../uncordon?upstream=ID (add network=NAME when there are
 * several networks).  solgate_metrics: Prometheus text.
 */

#include "ngx_http_solgate_module.h"


static ngx_int_t ngx_http_solgate_admin_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_metrics_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_solgate_cordon_action(ngx_http_request_t *r,
    ngx_uint_t cordon);
static ngx_http_solgate_network_t *ngx_http_solgate_admin_network(
    ngx_http_request_t *r, ngx_http_solgate_main_conf_t *smcf);
static ngx_int_t ngx_http_solgate_admin_reply(ngx_http_request_t *r,
    ngx_uint_t status, const char *fmt, ...);
static ngx_uint_t ngx_http_solgate_uri_ends_with(ngx_http_request_t *r,
    const char *suffix);


static ngx_str_t  ngx_http_solgate_admin_type = ngx_string("application/json");
static ngx_str_t  ngx_http_solgate_metrics_type =
    ngx_string("text/plain; version=0.0.4");


char *
ngx_http_solgate_admin(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_solgate_admin_handler;

    return NGX_CONF_OK;
}


char *
ngx_http_solgate_metrics(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_solgate_metrics_handler;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_solgate_admin_handler(ngx_http_request_t *r)
{
    sg_text_t                      text;
    ngx_int_t                      rc;
    ngx_http_solgate_main_conf_t  *smcf;

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_solgate_uri_ends_with(r, "/state")) {
        if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
            return ngx_http_solgate_admin_reply(r, NGX_HTTP_NOT_ALLOWED,
                                                "use GET");
        }

        smcf = ngx_http_get_module_main_conf(r, ngx_http_solgate_module);

        if (sg_status_render_state(smcf->cores.elts, smcf->cores.nelts,
                                   (int64_t) ngx_current_msec,
                                   ngx_http_solgate_wall_ms(), &text)
            != SG_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return ngx_http_solgate_send_text(r, &ngx_http_solgate_admin_type,
                                          &text);
    }

    if (ngx_http_solgate_uri_ends_with(r, "/cordon")) {
        return ngx_http_solgate_cordon_action(r, 1);
    }

    if (ngx_http_solgate_uri_ends_with(r, "/uncordon")) {
        return ngx_http_solgate_cordon_action(r, 0);
    }

    return ngx_http_solgate_admin_reply(r, NGX_HTTP_NOT_FOUND,
                                        "unknown endpoint, use state, "
                                        "cordon or uncordon");
}


static ngx_int_t
ngx_http_solgate_metrics_handler(ngx_http_request_t *r)
{
    sg_text_t                      text;
    ngx_int_t                      rc;
    ngx_http_solgate_main_conf_t  *smcf;

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        return NGX_HTTP_NOT_ALLOWED;
    }

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    smcf = ngx_http_get_module_main_conf(r, ngx_http_solgate_module);

    if (sg_status_render_metrics(smcf->cores.elts, smcf->cores.nelts,
                                 (int64_t) ngx_current_msec, &text)
        != SG_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_solgate_send_text(r, &ngx_http_solgate_metrics_type,
                                      &text);
}


static ngx_int_t
ngx_http_solgate_cordon_action(ngx_http_request_t *r, ngx_uint_t cordon)
{
    int                            rc;
    sg_str_t                       id, reason;
    ngx_int_t                      found;
    ngx_str_t                      upstream, text;
    ngx_http_solgate_network_t    *network;
    ngx_http_solgate_main_conf_t  *smcf;

    if (!(r->method & NGX_HTTP_POST)) {
        return ngx_http_solgate_admin_reply(r, NGX_HTTP_NOT_ALLOWED,
                                            "use POST");
    }

    smcf = ngx_http_get_module_main_conf(r, ngx_http_solgate_module);

    network = ngx_http_solgate_admin_network(r, smcf);
    if (network == NULL) {
        return ngx_http_solgate_admin_reply(r, NGX_HTTP_BAD_REQUEST,
                                            "name the network: network=NAME");
    }

    found = ngx_http_solgate_query_arg(r, "upstream", 1, &upstream);

    if (found == NGX_ERROR) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (found != NGX_OK || upstream.len == 0) {
        return ngx_http_solgate_admin_reply(r, NGX_HTTP_BAD_REQUEST,
                                            "missing upstream=ID");
    }

    found = ngx_http_solgate_query_arg(r, "reason", 1, &text);

    if (found == NGX_ERROR) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (found != NGX_OK) {
        ngx_str_null(&text);
    }

    id = ngx_http_solgate_sg_str(&upstream);
    reason = ngx_http_solgate_sg_str(&text);

    rc = cordon ? sg_network_cordon(network->core, id, reason,
                                    ngx_http_solgate_wall_ms())
                : sg_network_uncordon(network->core, id);

    if (rc == SG_NOT_FOUND) {
        return ngx_http_solgate_admin_reply(r, NGX_HTTP_NOT_FOUND,
                                            "no upstream \"%V\" in network "
                                            "\"%V\"", &upstream,
                                            &network->name);
    }

    if (rc != SG_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                  "solgate: operator %s upstream \"%V\" of network \"%V\"%s%V",
                  cordon ? "cordoned" : "uncordoned", &upstream,
                  &network->name, text.len ? ": " : "", &text);

    return ngx_http_solgate_admin_reply(r, NGX_HTTP_OK,
                                        "%s upstream \"%V\" of network "
                                        "\"%V\"",
                                        cordon ? "cordoned" : "uncordoned",
                                        &upstream, &network->name);
}


static ngx_http_solgate_network_t *
ngx_http_solgate_admin_network(ngx_http_request_t *r,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_str_t                     name;
    ngx_http_solgate_network_t  **networks;

    if (ngx_http_solgate_query_arg(r, "network", 1, &name) == NGX_OK
        && name.len)
    {
        return ngx_http_solgate_find_network(smcf, &name);
    }

    if (smcf->networks.nelts != 1) {
        return NULL;
    }

    networks = smcf->networks.elts;

    return networks[0];
}


static ngx_int_t
ngx_http_solgate_admin_reply(ngx_http_request_t *r, ngx_uint_t status,
    const char *fmt, ...)
{
    u_char    *p, *body, message[512];
    size_t     len, escaped;
    va_list    args;

    va_start(args, fmt);
    p = ngx_vslprintf(message, message + sizeof(message), fmt, args);
    va_end(args);

    len = p - message;

    /* the message quotes ids and reasons: escape it as a JSON string */
    escaped = ngx_escape_json(NULL, message, len);

    body = ngx_pnalloc(r->pool, sizeof("{\"ok\":false,\"message\":\"\"}")
                                + len + escaped);
    if (body == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = ngx_sprintf(body, "{\"ok\":%s,\"message\":\"",
                    status == NGX_HTTP_OK ? "true" : "false");
    p = (u_char *) ngx_escape_json(p, message, len);
    *p++ = '"';
    *p++ = '}';

    return ngx_http_solgate_send(r, status, &ngx_http_solgate_admin_type, body,
                                 p - body);
}


static ngx_uint_t
ngx_http_solgate_uri_ends_with(ngx_http_request_t *r, const char *suffix)
{
    size_t  n = ngx_strlen(suffix);

    return r->uri.len >= n
           && ngx_strncmp(r->uri.data + r->uri.len - n, suffix, n) == 0;
}


