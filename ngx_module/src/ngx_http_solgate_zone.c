/*
 * The module's shared memory zones: one per network (its upstreams' slot
 * views, health, cordons, leases, lanes) and one per solgate_blocks (Cube
 * Runner's counters, keys and queues).  Each holds one table that libcore
 * lays out; on reload the old zone's table is kept (as limit_req keeps its
 * tree) and libcore matches it to the new configuration.
 */

#include "ngx_http_solgate_module.h"


/*
 * What a zone's slab data points at: the size of the table libcore lays
 * out, then the table (a cache line further).  A reload that loads
 * another Solgate, whose table may be larger, finds the old size and
 * never lays its table over the old one.
 */
typedef union {
    size_t                        size;
    u_char                        line[64];
} ngx_http_solgate_zone_head_t;


static ngx_int_t ngx_http_solgate_zone_init(ngx_shm_zone_t *shm_zone,
    void *data);
static void *ngx_http_solgate_zone_table(ngx_slab_pool_t *shpool,
    size_t size);
static void ngx_http_solgate_zone_afresh(ngx_shm_zone_t *shm_zone);


/* Adds the zone PREFIX+NAME of `size` bytes; `zone` is copied. */
ngx_shm_zone_t *
ngx_http_solgate_zone_add(ngx_conf_t *cf, const char *prefix, size_t size,
    ngx_http_solgate_zone_t *zone)
{
    size_t                    n;
    ngx_str_t                 zone_name;
    ngx_shm_zone_t           *shm_zone;
    ngx_http_solgate_zone_t  *copy;

    n = ngx_strlen(prefix);

    zone_name.len = n + zone->name.len;
    zone_name.data = ngx_pnalloc(cf->pool, zone_name.len);
    copy = ngx_palloc(cf->pool, sizeof(ngx_http_solgate_zone_t));
    if (zone_name.data == NULL || copy == NULL) {
        return NULL;
    }

    ngx_memcpy(ngx_cpymem(zone_name.data, prefix, n), zone->name.data,
               zone->name.len);

    shm_zone = ngx_shared_memory_add(cf, &zone_name, size,
                                     &ngx_http_solgate_module);
    if (shm_zone == NULL) {
        return NULL;
    }

    if (shm_zone->data != NULL) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "%s \"%V\": shared memory zone \"%V\" is already "
                      "in use in %V:%ui", zone->block, &zone->name,
                      &zone_name, &zone->at.file, zone->at.line);
        return NULL;
    }

    *copy = *zone;

    shm_zone->init = ngx_http_solgate_zone_init;
    shm_zone->data = copy;

    return shm_zone;
}


static ngx_int_t
ngx_http_solgate_zone_init(ngx_shm_zone_t *shm_zone, void *data)
{
    char                           err[NGX_HTTP_SOLGATE_ERR_SIZE];
    size_t                         len;
    void                          *shared;
    ngx_uint_t                     fresh, reused;
    ngx_slab_pool_t               *shpool;
    ngx_http_solgate_zone_t       *zone;
    ngx_http_solgate_zone_head_t  *head;

    zone = shm_zone->data;
    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;
    reused = data != NULL || shm_zone->shm.exists;
    shared = reused ? ngx_http_solgate_zone_table(shpool, zone->shared_size)
                    : NULL;
    fresh = shared == NULL;

    if (reused && fresh) {
        ngx_log_error(NGX_LOG_WARN, shm_zone->shm.log, 0,
                      "%s \"%V\": the table in shared memory zone \"%V\" "
                      "was laid out by another Solgate version: a new one "
                      "starts empty beside it, so %s (%V:%ui)",
                      zone->block, &zone->name, &shm_zone->shm.name,
                      zone->afresh, &zone->at.file, zone->at.line);
    }

    if (fresh) {
        head = ngx_slab_calloc(shpool, sizeof(ngx_http_solgate_zone_head_t)
                                       + zone->shared_size);
        if (head == NULL) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "%s \"%V\": zone \"%V\" has no room for its "
                          "%uz-byte table in %V:%ui", zone->block,
                          &zone->name, &shm_zone->shm.name,
                          zone->shared_size, &zone->at.file, zone->at.line);
            return NGX_ERROR;
        }

        head->size = zone->shared_size;
        shpool->data = head;
        shared = head + 1;
    }

    if (!reused) {
        len = sizeof(" in solgate zone \"\"") + shm_zone->shm.name.len;

        shpool->log_ctx = ngx_slab_alloc(shpool, len);
        if (shpool->log_ctx == NULL) {
            return NGX_ERROR;
        }

        ngx_sprintf(shpool->log_ctx, " in solgate zone \"%V\"%Z",
                    &shm_zone->shm.name);

        ngx_http_solgate_zone_afresh(shm_zone);
    }

    if (zone->bind(zone->owner, shared, fresh, shm_zone->shm.log, err,
                   sizeof(err))
        != NGX_OK)
    {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                      "%s \"%V\": %s in %V:%ui", zone->block, &zone->name,
                      err, &zone->at.file, zone->at.line);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* The zone's table if it is one of `size` bytes (this version's), else
 * NULL (another version's, or a zone of no Solgate table yet). */
static void *
ngx_http_solgate_zone_table(ngx_slab_pool_t *shpool, size_t size)
{
    ngx_http_solgate_zone_head_t  *head;

    head = shpool->data;

    if (head == NULL || head->size != size) {
        return NULL;
    }

    return head + 1;
}


/*
 * A reload keeps a zone only at the same size: one whose "zone" changed is
 * made anew while the old workers still use the old one (the running
 * cycle's, ngx_cycle until the new one takes over), and what the old one
 * held is gone.  Said once, in the master, so an operator who resized
 * knows what starts again; the owner is told the old zone's table (still
 * mapped here), so that what the old workers do from now on is not taken
 * for kept.
 */
static void
ngx_http_solgate_zone_afresh(ngx_shm_zone_t *shm_zone)
{
    void                     *table;
    ngx_uint_t                i;
    ngx_shm_zone_t           *old;
    ngx_list_part_t          *part;
    ngx_http_solgate_zone_t  *zone;

    if (ngx_is_init_cycle(ngx_cycle)) {
        return;     /* nginx is starting: there was no zone to keep */
    }

    zone = shm_zone->data;
    part = (ngx_list_part_t *) &ngx_cycle->shared_memory.part;
    old = part->elts;

    for (i = 0; /* void */ ; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                return;
            }

            part = part->next;
            old = part->elts;
            i = 0;
        }

        if (old[i].tag != shm_zone->tag
            || old[i].shm.name.len != shm_zone->shm.name.len
            || ngx_strncmp(old[i].shm.name.data, shm_zone->shm.name.data,
                           shm_zone->shm.name.len)
               != 0)
        {
            continue;
        }

        table = ngx_http_solgate_zone_table(
                    (ngx_slab_pool_t *) old[i].shm.addr, zone->shared_size);

        if (zone->supersede != NULL && table != NULL) {
            zone->supersede(table);
        }

        ngx_log_error(NGX_LOG_WARN, shm_zone->shm.log, 0,
                      "%s \"%V\": this reload cannot keep shared memory "
                      "zone \"%V\", whose size changed from %uzk to %uzk: "
                      "a new zone starts empty, so %s (%V:%ui)",
                      zone->block, &zone->name, &shm_zone->shm.name,
                      old[i].shm.size / 1024, shm_zone->shm.size / 1024,
                      zone->afresh, &zone->at.file, zone->at.line);
        return;
    }
}
