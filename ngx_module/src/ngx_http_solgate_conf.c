/*
 * The directive blocks of the module (solgate_network,
 * solgate_network_defaults, solgate_blocks) are read with ordinary
 * ngx_command_t tables, so their directives use nginx's stock setters
 * (ngx_conf_set_flag_slot, ngx_conf_set_msec_slot, ngx_conf_set_num_slot,
 * ngx_http_set_complex_value_slot) or setters that hand the words to
 * libcore.  This file checks the number of arguments as ngx_conf_handler
 * does and reports errors the way nginx does, with file:line.
 */

#include "ngx_http_solgate_module.h"


typedef struct {
    ngx_command_t               *cmds;
    const char                  *block;
    void                        *conf;
} ngx_http_solgate_conf_ctx_t;


static char *ngx_http_solgate_conf_handler(ngx_conf_t *cf,
    ngx_command_t *dummy, void *conf);
static ngx_uint_t ngx_http_solgate_conf_args_ok(ngx_command_t *cmd,
    ngx_uint_t nelts);


/* the bits of cmd->type that allow 0 to 7 arguments (as in ngx_conf_file.c) */
static ngx_uint_t  ngx_http_solgate_argument_number[] = {
    NGX_CONF_NOARGS,
    NGX_CONF_TAKE1,
    NGX_CONF_TAKE2,
    NGX_CONF_TAKE3,
    NGX_CONF_TAKE4,
    NGX_CONF_TAKE5,
    NGX_CONF_TAKE6,
    NGX_CONF_TAKE7
};


/* Reads the block that follows the current directive with cmds. */
char *
ngx_http_solgate_conf_block(ngx_conf_t *cf, ngx_command_t *cmds,
    const char *block, void *conf)
{
    char                         *rv;
    ngx_conf_t                    save;
    ngx_http_solgate_conf_ctx_t   ctx;

    ctx.cmds = cmds;
    ctx.block = block;
    ctx.conf = conf;

    save = *cf;
    cf->handler = ngx_http_solgate_conf_handler;
    cf->handler_conf = (char *) &ctx;

    rv = ngx_conf_parse(cf, NULL);

    *cf = save;

    return rv;
}


static char *
ngx_http_solgate_conf_handler(ngx_conf_t *cf, ngx_command_t *dummy,
    void *conf)
{
    ngx_http_solgate_conf_ctx_t *ctx = conf;

    char           *rv;
    ngx_str_t      *name;
    ngx_command_t  *cmd;

    name = cf->args->elts;

    for (cmd = ctx->cmds; cmd->name.len; cmd++) {
        if (cmd->name.len != name->len
            || ngx_strncmp(cmd->name.data, name->data, name->len) != 0)
        {
            continue;
        }

        if (!ngx_http_solgate_conf_args_ok(cmd, cf->args->nelts)) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid number of arguments in \"%V\" "
                               "in \"%s\"", name, ctx->block);
            return NGX_CONF_ERROR;
        }

        rv = cmd->set(cf, cmd, ctx->conf);

        if (rv != NGX_CONF_OK && rv != NGX_CONF_ERROR) {
            /* as ngx_conf_handler does for directives of the main tables */
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\" directive %s",
                               name, rv);
            return NGX_CONF_ERROR;
        }

        return rv;
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "unknown directive \"%V\" in \"%s\"", name,
                       ctx->block);
    return NGX_CONF_ERROR;
}


static ngx_uint_t
ngx_http_solgate_conf_args_ok(ngx_command_t *cmd, ngx_uint_t nelts)
{
    if (cmd->type & NGX_CONF_ANY) {
        return 1;
    }

    if (cmd->type & NGX_CONF_FLAG) {
        return nelts == 2;
    }

    if (cmd->type & NGX_CONF_1MORE) {
        return nelts >= 2;
    }

    if (cmd->type & NGX_CONF_2MORE) {
        return nelts >= 3;
    }

    if (nelts > NGX_CONF_MAX_ARGS) {
        return 0;
    }

    return (cmd->type & ngx_http_solgate_argument_number[nelts - 1]) != 0;
}


/* A setter's refusal from libcore (rc is an sg_status_e): its message. */
char *
ngx_http_solgate_conf_failed(ngx_conf_t *cf, int rc, const char *err)
{
    if (rc == SG_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "solgate: %s", err);

    } else {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", err);
    }

    return NGX_CONF_ERROR;
}


sg_str_t
ngx_http_solgate_sg_str(ngx_str_t *s)
{
    sg_str_t  out;

    out.data = (const char *) s->data;
    out.len = s->len;

    return out;
}


/* The directive's arguments from `first` on, for libcore. */
char *
ngx_http_solgate_conf_args(ngx_conf_t *cf, ngx_uint_t first, sg_str_t **args,
    ngx_uint_t *n)
{
    ngx_str_t   *value;
    ngx_uint_t   i;

    value = cf->args->elts;
    *n = cf->args->nelts - first;

    *args = ngx_palloc(cf->temp_pool, *n * sizeof(sg_str_t));
    if (*args == NULL) {
        return NGX_CONF_ERROR;
    }

    for (i = 0; i < *n; i++) {
        (*args)[i] = ngx_http_solgate_sg_str(&value[first + i]);
    }

    return NGX_CONF_OK;
}


void
ngx_http_solgate_conf_here(ngx_conf_t *cf, ngx_http_solgate_conf_at_t *at)
{
    at->file = cf->conf_file->file.name;
    at->line = cf->conf_file->line;
}


/* libcore's description of an upstream, copied into the configuration. */
ngx_int_t
ngx_http_solgate_copy_info(ngx_conf_t *cf,
    ngx_http_solgate_upstream_t *upstream, sg_upstream_info_t *info)
{
    ngx_uint_t   i;
    ngx_str_t   *dst[7];
    sg_str_t    *src[7];

    ngx_memzero(upstream, sizeof(ngx_http_solgate_upstream_t));

    dst[0] = &upstream->id;
    dst[1] = &upstream->url;
    dst[2] = &upstream->host;
    dst[3] = &upstream->authority;
    dst[4] = &upstream->ws_url;
    dst[5] = &upstream->ws_host;
    dst[6] = &upstream->ws_authority;
    src[0] = &info->id;
    src[1] = &info->url;
    src[2] = &info->host;
    src[3] = &info->authority;
    src[4] = &info->ws_url;
    src[5] = &info->ws_host;
    src[6] = &info->ws_authority;

    for (i = 0; i < 7; i++) {
        dst[i]->len = src[i]->len;
        dst[i]->data = ngx_pnalloc(cf->pool, src[i]->len + 1);
        if (dst[i]->data == NULL) {
            return NGX_ERROR;
        }

        /* an empty field (a peer's ws_url) may have no data at all */
        if (src[i]->len > 0) {
            ngx_memcpy(dst[i]->data, src[i]->data, src[i]->len);
        }

        dst[i]->data[src[i]->len] = '\0';
    }

    ngx_http_solgate_conf_here(cf, &upstream->at);

    return NGX_OK;
}
