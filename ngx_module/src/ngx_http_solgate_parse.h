/*
 * Checks for the words of the solgate_network block.  Plain C over byte
 * ranges, no nginx calls, so they are unit tested on their own.
 */

#ifndef NGX_HTTP_SOLGATE_PARSE_H
#define NGX_HTTP_SOLGATE_PARSE_H

#include <stddef.h>


typedef struct {
    const unsigned char  *authority;    /* host[:port] */
    size_t                authority_len;
    const unsigned char  *path;         /* from the first '/', may be empty */
    size_t                path_len;
    unsigned              https:1;
} ngx_http_solgate_url_t;


/* Each returns NULL when valid, else a message for nginx -t. */
const char *ngx_http_solgate_parse_url(const unsigned char *s, size_t len,
    ngx_http_solgate_url_t *url);
const char *ngx_http_solgate_check_id(const unsigned char *s, size_t len);
const char *ngx_http_solgate_check_tags(const unsigned char *s, size_t len);
/* "getBlock|getTransaction|get*": method names or globs joined by '|' */
const char *ngx_http_solgate_check_methods(const unsigned char *s,
    size_t len);

#endif /* NGX_HTTP_SOLGATE_PARSE_H */
