/*
 * Buffer chain helpers: the request body arrives as a chain of memory
 * buffers and, past client_body_buffer_size, a temporary file; a
 * response's end is marked differently in a subrequest.
 */

#include "ngx_http_solgate_module.h"


/*
 * Copies the bytes of a chain (memory and file buffers) into dst.
 * Returns the number of bytes copied, or -1 when the chain holds more
 * than size bytes or a file read fails.
 */
ssize_t
ngx_http_solgate_chain_copy(ngx_chain_t *in, u_char *dst, size_t size)
{
    off_t         n;
    size_t        copied;
    ssize_t       got;
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    copied = 0;

    for (cl = in; cl; cl = cl->next) {
        b = cl->buf;

        if (ngx_buf_in_memory(b)) {
            n = b->last - b->pos;

            if ((size_t) n > size - copied) {
                return -1;
            }

            ngx_memcpy(dst + copied, b->pos, (size_t) n);
            copied += (size_t) n;
            continue;
        }

        if (b->in_file) {
            n = b->file_last - b->file_pos;

            if (n < 0 || (size_t) n > size - copied) {
                return -1;
            }

            got = ngx_read_file(b->file, dst + copied, (size_t) n,
                                b->file_pos);

            if (got != (ssize_t) n) {
                return -1;
            }

            copied += (size_t) n;
        }
    }

    return (ssize_t) copied;
}


/*
 * The last buffer of a response: last_buf for the client's request; a
 * subrequest's output (a piece of a batch) ends with last_in_chain.
 */
ngx_uint_t
ngx_http_solgate_is_last(ngx_http_request_t *r, ngx_buf_t *b)
{
    return b->last_buf || (r != r->main && b->last_in_chain);
}
