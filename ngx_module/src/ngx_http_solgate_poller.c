/*
 * The poller thread of a worker: started in init_process, stopped in
 * exit_process (and, with master_process off, restarted for each new cycle
 * by init_module).  It never calls nginx: libcore polls, writes the shared
 * zone and logs through ngx_http_solgate_poller_log, which formats the line
 * itself and writes it to stderr with one write(2): nginx points stderr at
 * the current error log at start and after every log reopen, so a rotated
 * log never leaves the thread writing to a closed (and reused) fd.
 */

#include <sys/syscall.h>

#include "ngx_http_solgate_module.h"


static void ngx_http_solgate_poller_log(void *user, int level,
    const char *line, size_t len);


static sg_poller_t  *ngx_http_solgate_poller;
static ngx_uint_t    ngx_http_solgate_log_level;

static const char   *ngx_http_solgate_level_names[] = {
    "", "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug"
};


ngx_int_t
ngx_http_solgate_poller_start(ngx_cycle_t *cycle)
{
    char                           err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_http_solgate_main_conf_t  *smcf;

    /* never in the master, the cache manager or the cache loader */
    if (ngx_process != NGX_PROCESS_WORKER
        && ngx_process != NGX_PROCESS_SINGLE)
    {
        return NGX_OK;
    }

    if (cycle->conf_ctx[ngx_http_module.index] == NULL) {
        return NGX_OK;
    }

    smcf = ngx_http_cycle_get_module_main_conf(cycle,
                                               ngx_http_solgate_module);

    if (smcf == NULL || smcf->cores.nelts == 0) {
        return NGX_OK;
    }

    ngx_http_solgate_log_level = cycle->log->log_level;

    if (sg_poller_start(smcf->cores.elts, smcf->cores.nelts,
                        (uint32_t) ngx_pid, smcf->fleet,
                        ngx_http_solgate_poller_log, NULL,
                        &ngx_http_solgate_poller, err, sizeof(err))
        != SG_OK)
    {
        /* routing still works; it just has no slot views to go by */
        ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                      "solgate: the poller thread did not start: %s", err);
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_INFO, cycle->log, 0,
                  "solgate: poller thread started for %ui network(s)",
                  smcf->cores.nelts);

    return NGX_OK;
}


/*
 * With master_process off a reload builds a new cycle in the same process
 * and runs no init_process or exit_process: move the thread to the new
 * cycle's networks here, before the old cycle's zones and pool go away.
 */
ngx_int_t
ngx_http_solgate_poller_reload(ngx_cycle_t *cycle)
{
    if (ngx_http_solgate_poller == NULL
        || ngx_process != NGX_PROCESS_SINGLE)
    {
        return NGX_OK;
    }

    ngx_http_solgate_poller_stop(cycle);

    return ngx_http_solgate_poller_start(cycle);
}


void
ngx_http_solgate_poller_stop(ngx_cycle_t *cycle)
{
    if (ngx_http_solgate_poller == NULL) {
        return;
    }

    sg_poller_stop(ngx_http_solgate_poller);
    ngx_http_solgate_poller = NULL;

    ngx_log_error(NGX_LOG_INFO, cycle->log, 0,
                  "solgate: poller thread stopped");
}


/* Runs on the poller thread: no nginx function may be called here. */
static void
ngx_http_solgate_poller_log(void *user, int level, const char *line,
    size_t len)
{
    int         n;
    char        buf[1024];
    time_t      now;
    struct tm   tm;

    if (level < NGX_LOG_EMERG || level > NGX_LOG_DEBUG
        || (ngx_uint_t) level > ngx_http_solgate_log_level)
    {
        return;
    }

    now = time(NULL);
    localtime_r(&now, &tm);

    n = snprintf(buf, sizeof(buf),
                 "%04d/%02d/%02d %02d:%02d:%02d [%s] %d#%ld: solgate: %.*s\n",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, ngx_http_solgate_level_names[level],
                 (int) getpid(), (long) syscall(SYS_gettid), (int) len, line);

    if (n <= 0) {
        return;
    }

    if ((size_t) n >= sizeof(buf)) {
        n = sizeof(buf) - 1;
        buf[n - 1] = '\n';
    }

    /* one write per line, so lines from threads never interleave */
    if (write(STDERR_FILENO, buf, (size_t) n) < 0) {
        return;
    }
}
