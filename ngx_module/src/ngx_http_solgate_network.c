/*
 * The solgate_network block (a Solana cluster's upstreams and settings),
 * the solgate_network_defaults block, and the core network libcore builds
 * from them.  libcore checks every word (names, URLs, options, clusters,
 * selectors) as the block is read; what nginx knows (upstream {} blocks,
 * sizes and times, merged defaults) is handed to it after the http block.
 */

#include "ngx_http_solgate_module.h"


/* Without a "zone" directive: room for the table and the slab's pages. */
#define NGX_HTTP_SOLGATE_DEFAULT_ZONE  (1024 * 1024)


typedef int (*ngx_http_solgate_core_set_pt)(sg_network_t *net,
    sg_str_t value, char *err, size_t err_size);

static char *ngx_http_solgate_set_word(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_solgate_set_default(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_solgate_set_zone(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_solgate_set_state(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_solgate_state_path(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network);
static char *ngx_http_solgate_set_retry(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_solgate_set_policy(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_solgate_apply_policies(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_http_solgate_settings_t *s,
    ngx_http_solgate_settings_t *d);
static char *ngx_http_solgate_add_upstream(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static ngx_int_t ngx_http_solgate_add_zone(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, size_t size);
static ngx_int_t ngx_http_solgate_bind_network(void *owner, void *shared,
    ngx_uint_t fresh, ngx_log_t *log, char *err, size_t err_size);
static void ngx_http_solgate_supersede_network(void *old_shared);
static ngx_int_t ngx_http_solgate_build_core(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf, ngx_http_solgate_network_t *network);
static ngx_int_t ngx_http_solgate_reach_blocks(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf, ngx_http_solgate_network_t *network);
static ngx_int_t ngx_http_solgate_split_block(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf, ngx_http_solgate_network_t *network,
    ngx_http_solgate_upstream_t *upstream, ngx_http_upstream_srv_conf_t *uscf,
    size_t at, size_t *nodes);
static ngx_int_t ngx_http_solgate_name_nodes(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_http_solgate_upstream_t *upstream,
    ngx_http_upstream_srv_conf_t *uscf, size_t at,
    ngx_http_solgate_upstream_t *node, size_t nodes);
static void ngx_http_solgate_free_core(void *data);
static char *ngx_http_solgate_check_debounce(ngx_conf_t *cf, void *post,
    void *data);
static char *ngx_http_solgate_check_ws_idle(ngx_conf_t *cf, void *post,
    void *data);


static ngx_conf_num_bounds_t  ngx_http_solgate_count_bounds = {
    ngx_conf_check_num_bounds, 0, -1
};

/* checked at the directive, so a defaults block's value is named there */
static ngx_conf_post_t  ngx_http_solgate_ws_idle_post = {
    ngx_http_solgate_check_ws_idle
};

static ngx_conf_post_t  ngx_http_solgate_debounce_post = {
    ngx_http_solgate_check_debounce
};


/* the libcore setter of each one-word directive, in cmd->post */
static ngx_http_solgate_core_set_pt  ngx_http_solgate_set_cluster =
    sg_network_set_cluster;
static ngx_http_solgate_core_set_pt  ngx_http_solgate_set_commitment =
    sg_network_set_commitment;
static ngx_http_solgate_core_set_pt  ngx_http_solgate_set_default_selector =
    sg_network_set_default_selector;


#define NGX_HTTP_SOLGATE_SETTINGS(base)                                      \
    { ngx_string("state_poller_debounce"),                                   \
      NGX_CONF_TAKE1,                                                        \
      ngx_conf_set_msec_slot,                                                \
      0,                                                                     \
      (base) + offsetof(ngx_http_solgate_settings_t, debounce),              \
      &ngx_http_solgate_debounce_post },                                     \
                                                                             \
    { ngx_string("max_finalized_slot_lag"),                                  \
      NGX_CONF_TAKE1,                                                        \
      ngx_conf_set_num_slot,                                                 \
      0,                                                                     \
      (base) + offsetof(ngx_http_solgate_settings_t,                         \
                        max_finalized_slot_lag),                             \
      &ngx_http_solgate_count_bounds },                                        \
                                                                             \
    { ngx_string("enforce_block_availability"),                              \
      NGX_CONF_FLAG,                                                         \
      ngx_conf_set_flag_slot,                                                \
      0,                                                                     \
      (base) + offsetof(ngx_http_solgate_settings_t,                         \
                        enforce_block_availability),                         \
      NULL },                                                                \
                                                                             \
    { ngx_string("max_slot_lag"),                                            \
      NGX_CONF_TAKE1,                                                        \
      ngx_conf_set_num_slot,                                                 \
      0,                                                                     \
      (base) + offsetof(ngx_http_solgate_settings_t, max_slot_lag),          \
      &ngx_http_solgate_count_bounds },                                        \
                                                                             \
    { ngx_string("use_upstream_from_client"),                                \
      NGX_CONF_FLAG,                                                         \
      ngx_conf_set_flag_slot,                                                \
      0,                                                                     \
      (base) + offsetof(ngx_http_solgate_settings_t,                         \
                        use_upstream_from_client),                           \
      NULL },                                                                \
                                                                             \
    { ngx_string("max_batch_size"),                                          \
      NGX_CONF_TAKE1,                                                        \
      ngx_conf_set_num_slot,                                                 \
      0,                                                                     \
      (base) + offsetof(ngx_http_solgate_settings_t, max_batch_size),        \
      &ngx_http_solgate_count_bounds },                                        \
                                                                             \
    { ngx_string("ws_max_connections"),                                      \
      NGX_CONF_TAKE1,                                                        \
      ngx_conf_set_num_slot,                                                 \
      0,                                                                     \
      (base) + offsetof(ngx_http_solgate_settings_t, ws_max_connections),    \
      &ngx_http_solgate_count_bounds },                                        \
                                                                             \
    { ngx_string("ws_idle_timeout"),                                         \
      NGX_CONF_TAKE1,                                                        \
      ngx_conf_set_msec_slot,                                                \
      0,                                                                     \
      (base) + offsetof(ngx_http_solgate_settings_t, ws_idle_timeout),       \
      &ngx_http_solgate_ws_idle_post },                                      \
                                                                             \
    { ngx_string("retry_missing_data"),                                      \
      NGX_CONF_1MORE,                                                        \
      ngx_http_solgate_set_retry,                                            \
      0,                                                                     \
      (base),                                                                \
      NULL },                                                                \
                                                                             \
    { ngx_string("broadcast"),                                               \
      NGX_CONF_1MORE,                                                        \
      ngx_http_solgate_set_policy,                                           \
      0,                                                                     \
      (base),                                                                \
      NULL },                                                                \
                                                                             \
    { ngx_string("consensus"),                                               \
      NGX_CONF_1MORE,                                                        \
      ngx_http_solgate_set_policy,                                           \
      0,                                                                     \
      (base),                                                                \
      NULL },                                                                \
                                                                             \
    { ngx_string("hedge"),                                                   \
      NGX_CONF_1MORE,                                                        \
      ngx_http_solgate_set_policy,                                           \
      0,                                                                     \
      (base),                                                                \
      NULL }


static ngx_command_t  ngx_http_solgate_network_commands[] = {

    { ngx_string("cluster"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_set_word,
      0,
      0,
      &ngx_http_solgate_set_cluster },

    { ngx_string("commitment"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_set_word,
      0,
      0,
      &ngx_http_solgate_set_commitment },

    { ngx_string("zone"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_set_zone,
      0,
      0,
      NULL },

    { ngx_string("state"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_set_state,
      0,
      0,
      NULL },

    { ngx_string("use_upstream_default"),
      NGX_CONF_TAKE1,
      ngx_http_solgate_set_default,
      0,
      0,
      &ngx_http_solgate_set_default_selector },

    { ngx_string("upstream"),
      NGX_CONF_2MORE,
      ngx_http_solgate_add_upstream,
      0,
      0,
      NULL },

    NGX_HTTP_SOLGATE_SETTINGS(offsetof(ngx_http_solgate_network_t, settings)),

      ngx_null_command
};


/* solgate_network_defaults takes only the settings */
static ngx_command_t  ngx_http_solgate_defaults_commands[] = {

    NGX_HTTP_SOLGATE_SETTINGS(0),

      ngx_null_command
};


void
ngx_http_solgate_init_settings(ngx_http_solgate_settings_t *settings)
{
    settings->debounce = NGX_CONF_UNSET_MSEC;
    settings->max_finalized_slot_lag = NGX_CONF_UNSET;
    settings->enforce_block_availability = NGX_CONF_UNSET;
    settings->max_slot_lag = NGX_CONF_UNSET;
    settings->use_upstream_from_client = NGX_CONF_UNSET;
    settings->retry_missing_data = NGX_CONF_UNSET;
    settings->retry_attempts = NGX_CONF_UNSET_UINT;
    settings->retry_delay = NGX_CONF_UNSET_MSEC;
    settings->max_batch_size = NGX_CONF_UNSET;
    settings->ws_idle_timeout = NGX_CONF_UNSET_MSEC;
    settings->ws_max_connections = NGX_CONF_UNSET;
    ngx_memzero(settings->policies, sizeof(settings->policies));
}


char *
ngx_http_solgate_network_block(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    int                           rc;
    char                         *rv, err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_str_t                      prefix;
    ngx_str_t                    *value;
    ngx_pool_cleanup_t           *cln;
    ngx_http_solgate_zone_t      *zone;
    ngx_http_solgate_network_t   *network, **slot;

    value = cf->args->elts;

    if (ngx_http_solgate_find_network(smcf, &value[1]) != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "duplicate solgate_network \"%V\"", &value[1]);
        return NGX_CONF_ERROR;
    }

    network = ngx_pcalloc(cf->pool, sizeof(ngx_http_solgate_network_t));
    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (network == NULL || cln == NULL) {
        return NGX_CONF_ERROR;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     network->shm_zone = NULL;
     *     network->blocks = NULL;
     *     network->state_dir = { 0, NULL };
     */

    rc = sg_network_new(ngx_http_solgate_sg_str(&value[1]), &network->core,
                        err, sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    cln->handler = ngx_http_solgate_free_core;
    cln->data = network->core;

    /* an upstream's relative tls_* files are where nginx's own are */
    prefix = ngx_http_solgate_sg_str(&cf->cycle->conf_prefix);

    rc = sg_network_set_conf_prefix(network->core, prefix, err, sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    network->name = value[1];
    ngx_http_solgate_conf_here(cf, &network->at);
    ngx_http_solgate_init_settings(&network->settings);

    if (ngx_array_init(&network->upstreams, cf->pool, 4,
                       sizeof(ngx_http_solgate_upstream_t))
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    rv = ngx_http_solgate_conf_block(cf, ngx_http_solgate_network_commands,
                                     "solgate_network", network);
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    if (network->shm_zone == NULL
        && ngx_http_solgate_add_zone(cf, network,
                                     NGX_HTTP_SOLGATE_DEFAULT_ZONE)
           != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    /* known once the block is read: "state" may follow "zone" */
    zone = network->shm_zone->data;
    zone->afresh = network->state_dir.len
                   ? "slot views, health, leases and counters are learnt "
                     "again, and the operator cordons and drains are taken "
                     "back from the state file"
                   : "slot views, health, leases and counters are learnt "
                     "again, and the operator cordons and drains are lost "
                     "(\"state\" would keep them)";

    slot = ngx_array_push(&smcf->networks);
    if (slot == NULL) {
        return NGX_CONF_ERROR;
    }

    *slot = network;

    return NGX_CONF_OK;
}


char *
ngx_http_solgate_defaults_block(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_solgate_main_conf_t *smcf = conf;

    if (smcf->defaults_set) {
        return "is duplicate";
    }

    smcf->defaults_set = 1;

    return ngx_http_solgate_conf_block(cf, ngx_http_solgate_defaults_commands,
                                       "solgate_network_defaults",
                                       &smcf->defaults);
}


ngx_http_solgate_network_t *
ngx_http_solgate_find_network(ngx_http_solgate_main_conf_t *smcf,
    ngx_str_t *name)
{
    ngx_uint_t                    i;
    ngx_http_solgate_network_t  **network;

    network = smcf->networks.elts;

    for (i = 0; i < smcf->networks.nelts; i++) {
        if (network[i]->name.len == name->len
            && ngx_strncmp(network[i]->name.data, name->data, name->len) == 0)
        {
            return network[i];
        }
    }

    return NULL;
}


/* A one-word directive libcore checks and keeps (cmd->post: its setter). */
static char *
ngx_http_solgate_set_word(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_network_t *network = conf;

    int                            rc;
    char                           err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t                     *value;
    ngx_http_solgate_core_set_pt  *set;

    value = cf->args->elts;
    set = cmd->post;

    rc = (*set)(network->core, ngx_http_solgate_sg_str(&value[1]), err,
                sizeof(err));

    return rc == SG_OK ? NGX_CONF_OK
                       : ngx_http_solgate_conf_failed(cf, rc, err);
}


/* use_upstream_default: its line, for a selector no upstream matches */
static char *
ngx_http_solgate_set_default(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_network_t *network = conf;

    ngx_http_solgate_conf_here(cf, &network->default_at);

    return ngx_http_solgate_set_word(cf, cmd, conf);
}


/* the policies' names, in the order of settings->policies */
static ngx_str_t  ngx_http_solgate_policy_names[NGX_HTTP_SOLGATE_POLICIES] = {
    ngx_string("broadcast"),
    ngx_string("consensus"),
    ngx_string("hedge")
};


/*
 * broadcast, consensus, hedge METHOD|METHOD... [options]: libcore checks
 * the words here (so a defaults block's mistake is named at its line);
 * they reach the network when its settings are merged.
 */
static char *
ngx_http_solgate_set_policy(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    int                              rc;
    char                             err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_str_t                        *args;
    ngx_uint_t                       i, n;
    ngx_http_solgate_settings_t     *s;
    ngx_http_solgate_policy_args_t  *policy;

    s = (ngx_http_solgate_settings_t *) ((char *) conf + cmd->offset);

    for (i = 0; i < NGX_HTTP_SOLGATE_POLICIES; i++) {
        if (ngx_strcmp(ngx_http_solgate_policy_names[i].data, cmd->name.data)
            == 0)
        {
            break;
        }
    }

    if (i == NGX_HTTP_SOLGATE_POLICIES) {
        return "is not a policy";
    }

    policy = &s->policies[i];

    if (policy->args != NULL) {
        return "is duplicate";
    }

    if (ngx_http_solgate_conf_args(cf, 1, &args, &n) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    rc = sg_check_policy(ngx_http_solgate_sg_str(&cmd->name), args, n, err,
                         sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    policy->args = args;
    policy->n = n;
    ngx_http_solgate_conf_here(cf, &policy->at);

    return NGX_CONF_OK;
}


/* The network's own policies, else those of solgate_network_defaults. */
static ngx_int_t
ngx_http_solgate_apply_policies(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_http_solgate_settings_t *s,
    ngx_http_solgate_settings_t *d)
{
    int                              rc;
    char                             err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_str_t                         warning;
    ngx_uint_t                       i;
    ngx_http_solgate_policy_args_t  *policy;

    for (i = 0; i < NGX_HTTP_SOLGATE_POLICIES; i++) {
        policy = s->policies[i].args != NULL ? &s->policies[i]
                                             : &d->policies[i];
        if (policy->args == NULL) {
            continue;
        }

        rc = sg_network_set_policy(network->core,
                 ngx_http_solgate_sg_str(&ngx_http_solgate_policy_names[i]),
                 policy->args, policy->n, err, sizeof(err));
        if (rc != SG_OK) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "%s in %V:%ui", err,
                          &policy->at.file, policy->at.line);
            return NGX_ERROR;
        }

        warning = sg_network_warning(network->core);

        /* of its words, not of the network: a defaults block's is said
         * once, not by every network that takes it */
        if (warning.len > 0 && !policy->warned) {
            ngx_log_error(NGX_LOG_WARN, cf->log, 0, "%*s in %V:%ui",
                          warning.len, warning.data, &policy->at.file,
                          policy->at.line);
            policy->warned = 1;
        }
    }

    return NGX_OK;
}


/* retry_missing_data on|off [attempts=N] [delay=TIME]: libcore checks it */
static char *
ngx_http_solgate_set_retry(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    int                           rc, on;
    char                          err[NGX_HTTP_SOLGATE_ERR_SIZE];
    uint32_t                      attempts, delay_ms;
    sg_str_t                     *args;
    ngx_uint_t                    n;
    ngx_http_solgate_settings_t  *s;

    s = (ngx_http_solgate_settings_t *) ((char *) conf + cmd->offset);

    if (s->retry_missing_data != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    if (ngx_http_solgate_conf_args(cf, 1, &args, &n) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    rc = sg_parse_retry_missing_data(args, n, &on, &attempts, &delay_ms, err,
                                     sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    s->retry_missing_data = on;
    s->retry_attempts = attempts;
    s->retry_delay = delay_ms;

    return NGX_CONF_OK;
}


static char *
ngx_http_solgate_set_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_network_t *network = conf;

    ssize_t     size, min;
    ngx_str_t  *value;

    if (network->shm_zone != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;

    size = ngx_parse_size(&value[1]);

    if (size == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid zone size \"%V\"", &value[1]);
        return NGX_CONF_ERROR;
    }

    /* the upstream table plus the slab allocator's own pages */
    min = (ssize_t) (sg_network_shared_size() + 16 * ngx_pagesize);
    min = ngx_align(min, 64 * 1024);

    if (size < min) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "zone \"%V\" is too small, the minimum is %uzk",
                           &value[1], (size_t) min / 1024);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_solgate_add_zone(cf, network, (size_t) size) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/*
 * state PATH: libcore refuses a path that is not a directory or that this
 * process cannot write (as nginx -t runs it); one that does not exist yet
 * is made by the master with its parents, and, as nginx's temp paths are,
 * given to the workers' user, who write the file.
 */
static char *
ngx_http_solgate_set_state(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_network_t *network = conf;

    int         rc;
    char        err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_str_t  *value, dir;

    value = cf->args->elts;
    dir = value[1];

    if (ngx_conf_full_name(cf->cycle, &dir, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    rc = sg_network_set_state(network->core, ngx_http_solgate_sg_str(&dir),
                              err, sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    network->state_dir = dir;

    if (ngx_http_solgate_state_path(cf, network) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_solgate_state_path(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network)
{
    u_char      *name;
    ngx_err_t    err;
    ngx_path_t  *path;

    name = ngx_pnalloc(cf->pool, network->state_dir.len + 1);
    path = ngx_pcalloc(cf->pool, sizeof(ngx_path_t));
    if (name == NULL || path == NULL) {
        return NGX_ERROR;
    }

    ngx_cpystrn(name, network->state_dir.data, network->state_dir.len + 1);

    err = ngx_create_full_path(name, 0755);
    if (err) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, err,
                           "cannot create the parents of state directory "
                           "\"%V\" of network \"%V\"", &network->state_dir,
                           &network->name);
        return NGX_ERROR;
    }

    path->name.data = name;
    path->name.len = network->state_dir.len;
    path->conf_file = cf->conf_file->file.name.data;
    path->line = cf->conf_file->line;

    return ngx_add_path(cf, &path) == NGX_OK ? NGX_OK : NGX_ERROR;
}


static char *
ngx_http_solgate_add_upstream(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_solgate_network_t *network = conf;

    int                           rc;
    char                          err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_str_t                     *args;
    ngx_uint_t                    n;
    sg_upstream_info_t            info;
    ngx_http_solgate_upstream_t  *upstream;

    if (ngx_http_solgate_conf_args(cf, 1, &args, &n) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    rc = sg_network_add_upstream(network->core, args, n, &info, err,
                                 sizeof(err));
    if (rc != SG_OK) {
        return ngx_http_solgate_conf_failed(cf, rc, err);
    }

    upstream = ngx_array_push(&network->upstreams);
    if (upstream == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_solgate_copy_info(cf, upstream, &info) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (info.warning.len > 0) {
        ngx_conf_log_error(NGX_LOG_WARN, cf, 0, "%*s", info.warning.len,
                           info.warning.data);
    }

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_solgate_add_zone(ngx_conf_t *cf, ngx_http_solgate_network_t *network,
    size_t size)
{
    ngx_http_solgate_zone_t  zone;

    zone.block = "solgate_network";
    zone.name = network->name;
    zone.at = network->at;
    zone.owner = network;
    zone.shared_size = sg_network_shared_size();
    zone.bind = ngx_http_solgate_bind_network;
    zone.supersede = ngx_http_solgate_supersede_network;
    zone.afresh = "";   /* set once the block is read */

    network->shm_zone = ngx_http_solgate_zone_add(cf, "solgate_network_",
                                                  size, &zone);

    return network->shm_zone ? NGX_OK : NGX_ERROR;
}


/*
 * A zone that starts empty (nginx starting, a reload that resized it)
 * takes the operator's cordons and drains back from the state file:
 * libcore says whether it did, or why it could not.  A file that cannot
 * be used is logged and left alone: nginx starts without it.
 */
static ngx_int_t
ngx_http_solgate_bind_network(void *owner, void *shared, ngx_uint_t fresh,
    ngx_log_t *log, char *err, size_t err_size)
{
    ngx_http_solgate_network_t *network = owner;

    int        level;
    sg_text_t  line;

    if (sg_network_bind(network->core, shared, (int) fresh,
                        (int64_t) ngx_current_msec, err, err_size)
        != SG_OK)
    {
        return NGX_ERROR;
    }

    if (sg_network_restore(network->core, (int64_t) ngx_current_msec,
                           ngx_http_solgate_wall_ms(), &level, &line)
        != SG_OK)
    {
        return NGX_OK;
    }

    /* what was taken back is no news to `nginx -t` */
    if (level <= NGX_LOG_WARN || !ngx_test_config) {
        ngx_log_error((ngx_uint_t) level, log, 0, "solgate: %*s", line.len,
                      line.data);
    }

    sg_text_free(&line);

    return NGX_OK;
}


static void
ngx_http_solgate_supersede_network(void *old_shared)
{
    sg_network_supersede(old_shared, (int64_t) ngx_current_msec);
}


/*
 * Called once the http block is read (every network, the defaults and the
 * upstream blocks known): settles each network's settings with libcore and
 * tells it which upstreams go through an upstream block.
 */
ngx_int_t
ngx_http_solgate_build_cores(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf)
{
    ngx_uint_t                    i;
    sg_network_t                **core;
    ngx_http_solgate_network_t  **network;

    if (ngx_array_init(&smcf->cores, cf->pool, smcf->networks.nelts + 1,
                       sizeof(sg_network_t *))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    network = smcf->networks.elts;

    for (i = 0; i < smcf->networks.nelts; i++) {
        if (ngx_http_solgate_build_core(cf, smcf, network[i]) != NGX_OK) {
            return NGX_ERROR;
        }

        core = ngx_array_push(&smcf->cores);
        if (core == NULL) {
            return NGX_ERROR;
        }

        *core = network[i]->core;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_solgate_build_core(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf, ngx_http_solgate_network_t *network)
{
    int                              rc;
    char                             err[NGX_HTTP_SOLGATE_ERR_SIZE];
    sg_network_settings_t            merged;
    ngx_http_solgate_settings_t     *s, *d;
    ngx_http_solgate_policy_args_t  *policy;

    s = &network->settings;
    d = &smcf->defaults;

    ngx_conf_merge_msec_value(s->debounce, d->debounce,
                              SG_DEFAULT_DEBOUNCE_MS);
    ngx_conf_merge_value(s->max_finalized_slot_lag, d->max_finalized_slot_lag,
                         SG_DEFAULT_MAX_FINALIZED_LAG);
    ngx_conf_merge_value(s->enforce_block_availability,
                         d->enforce_block_availability,
                         SG_DEFAULT_ENFORCE_BLOCK_AVAILABILITY);

    ngx_conf_merge_value(s->max_slot_lag, d->max_slot_lag,
                         SG_DEFAULT_MAX_SLOT_LAG);
    ngx_conf_merge_value(s->use_upstream_from_client,
                         d->use_upstream_from_client,
                         SG_DEFAULT_USE_UPSTREAM_FROM_CLIENT);
    ngx_conf_merge_value(s->retry_missing_data, d->retry_missing_data,
                         SG_DEFAULT_RETRY_MISSING_DATA);
    ngx_conf_merge_uint_value(s->retry_attempts, d->retry_attempts,
                              SG_DEFAULT_RETRY_ATTEMPTS);
    ngx_conf_merge_msec_value(s->retry_delay, d->retry_delay,
                              SG_DEFAULT_RETRY_DELAY_MS);
    ngx_conf_merge_value(s->max_batch_size, d->max_batch_size,
                         SG_DEFAULT_MAX_BATCH_SIZE);
    ngx_conf_merge_msec_value(s->ws_idle_timeout, d->ws_idle_timeout,
                              NGX_HTTP_SOLGATE_WS_IDLE_TIMEOUT);
    ngx_conf_merge_value(s->ws_max_connections, d->ws_max_connections, 0);

    sg_network_settings_default(&merged);
    merged.debounce_ms = (uint32_t) ngx_min(s->debounce,
                                            (ngx_msec_t) UINT32_MAX);
    merged.max_finalized_slot_lag = s->max_finalized_slot_lag;
    merged.enforce_block_availability = (int) s->enforce_block_availability;
    merged.max_slot_lag = s->max_slot_lag;
    merged.use_upstream_from_client = (int) s->use_upstream_from_client;
    merged.retry_missing_data = (int) s->retry_missing_data;
    merged.retry_attempts = (uint32_t) s->retry_attempts;
    merged.retry_delay_ms = (uint32_t) s->retry_delay;
    merged.max_batch_size = s->max_batch_size;
    merged.ws_max_connections = s->ws_max_connections;

    if (ngx_http_solgate_apply_policies(cf, network, s, d) != NGX_OK) {
        return NGX_ERROR;
    }

    if (network->default_at.line != 0) {
        rc = sg_network_check_default_selector(network->core, err,
                                               sizeof(err));
        if (rc != SG_OK) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "%s in %V:%ui", err,
                          &network->default_at.file, network->default_at.line);
            return NGX_ERROR;
        }
    }

    rc = sg_network_configure(network->core, &merged, err, sizeof(err));
    if (rc != SG_OK) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "%s in %V:%ui", err,
                      &network->at.file, network->at.line);
        return NGX_ERROR;
    }

    if (ngx_http_solgate_reach_blocks(cf, smcf, network) != NGX_OK) {
        return NGX_ERROR;
    }

    /* its nodes are known now (a block's servers are one each): the
     * network's own consensus is refused, one it takes from the defaults
     * (meant for larger networks, maybe) is warned of */
    policy = &s->policies[NGX_HTTP_SOLGATE_CONSENSUS];

    if (policy->args == NULL) {
        policy = &d->policies[NGX_HTTP_SOLGATE_CONSENSUS];
    }

    if (policy->args == NULL
        || sg_network_check_consensus(network->core, err, sizeof(err))
           == SG_OK)
    {
        return NGX_OK;
    }

    if (policy == &d->policies[NGX_HTTP_SOLGATE_CONSENSUS]) {
        ngx_log_error(NGX_LOG_WARN, cf->log, 0,
                      "%s (its consensus is solgate_network_defaults') "
                      "in %V:%ui", err, &policy->at.file, policy->at.line);
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "%s in %V:%ui", err,
                  &policy->at.file, policy->at.line);
    return NGX_ERROR;
}


/*
 * Where an upstream's URL names an nginx upstream {} block, the poller
 * (which does not go through nginx) connects to the block's servers, and
 * a block of several servers makes the upstream one node per server
 * (libcore names them); nginx's list of the network's upstreams is rebuilt
 * to match libcore's, each node pinned to its server for solgate_balancer.
 */
static ngx_int_t
ngx_http_solgate_reach_blocks(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf, ngx_http_solgate_network_t *network)
{
    size_t                          at, nodes;
    ngx_uint_t                      i;
    ngx_array_t                     all;
    ngx_http_upstream_srv_conf_t   *uscf;
    ngx_http_solgate_target_t       reach;
    ngx_http_solgate_upstream_t    *upstream, *node;

    if (ngx_array_init(&all, cf->pool, network->upstreams.nelts,
                       sizeof(ngx_http_solgate_upstream_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    upstream = network->upstreams.elts;
    at = 0;

    for (i = 0; i < network->upstreams.nelts; i++) {
        if (ngx_http_solgate_reach(cf, &upstream[i].authority, &reach)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        uscf = reach.block;
        nodes = 1;
        upstream[i].by_name = reach.block == NULL && reach.address == NULL;

        if (upstream[i].ws_authority.len > 0) {
            if (ngx_http_solgate_reach(cf, &upstream[i].ws_authority, &reach)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            upstream[i].ws_by_name = reach.block == NULL
                                     && reach.address == NULL;
        }

        if (uscf != NULL
            && ngx_http_solgate_split_block(cf, smcf, network, &upstream[i],
                                            uscf, at, &nodes)
               != NGX_OK)
        {
            return NGX_ERROR;
        }

        node = ngx_array_push_n(&all, nodes);
        if (node == NULL) {
            return NGX_ERROR;
        }

        if (ngx_http_solgate_name_nodes(cf, network, &upstream[i], uscf, at,
                                        node, nodes)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        at += nodes;
    }

    network->upstreams = all;

    return NGX_OK;
}


/* Tells libcore the servers of the block `upstream` names. */
static ngx_int_t
ngx_http_solgate_split_block(ngx_conf_t *cf,
    ngx_http_solgate_main_conf_t *smcf, ngx_http_solgate_network_t *network,
    ngx_http_solgate_upstream_t *upstream, ngx_http_upstream_srv_conf_t *uscf,
    size_t at, size_t *nodes)
{
    int                 rc;
    char                err[NGX_HTTP_SOLGATE_ERR_SIZE];
    ngx_uint_t          n;
    sg_block_server_t  *servers;

    n = uscf->servers->nelts;

    if (n > 1 && !ngx_http_solgate_block_listed(&smcf->balanced, uscf)) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "upstream \"%V\" of network \"%V\" names upstream "
                      "block \"%V\", which has %ui servers: put "
                      "\"solgate_balancer;\" in that block, before "
                      "\"keepalive\", so that each server is a node in %V:%ui",
                      &upstream->id, &network->name, &uscf->host, n,
                      &upstream->at.file,
                      upstream->at.line);
        return NGX_ERROR;
    }

    servers = ngx_http_solgate_block_servers(cf, uscf);
    if (servers == NULL) {
        return NGX_ERROR;
    }

    rc = sg_network_reach_through_block(network->core, at, servers, n, nodes,
                                        err, sizeof(err));
    if (rc != SG_OK) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "%s in %V:%ui", err,
                      &upstream->at.file, upstream->at.line);
        return NGX_ERROR;
    }

    if (*nodes > 1 || n > 1) {
        return ngx_http_solgate_conf_notice(cf,
                   "upstream \"%V\" of network \"%V\" is %uz node(s), one "
                   "per server of upstream block \"%V\" not marked down",
                   &upstream->id, &network->name, *nodes, &uscf->host);
    }

    return NGX_OK;
}


/*
 * The nodes libcore made of `upstream` (at `at` in its list): each keeps
 * the upstream's URL and Host, takes its own id, and is pinned to its
 * server's first address in the block's round-robin list.
 */
static ngx_int_t
ngx_http_solgate_name_nodes(ngx_conf_t *cf,
    ngx_http_solgate_network_t *network, ngx_http_solgate_upstream_t *upstream,
    ngx_http_upstream_srv_conf_t *uscf, size_t at,
    ngx_http_solgate_upstream_t *node, size_t nodes)
{
    size_t                       k;
    ngx_uint_t                   s, server_at;
    sg_upstream_info_t           info;
    ngx_http_upstream_server_t  *server;

    for (k = 0; k < nodes; k++) {
        node[k] = *upstream;

        if (sg_network_upstream(network->core, at + k, &info) != SG_OK) {
            return NGX_ERROR;
        }

        if (info.block_server == 0) {
            continue;
        }

        node[k].id.len = info.id.len;
        node[k].id.data = ngx_pstrdup(cf->pool, &(ngx_str_t) {
                                          info.id.len,
                                          (u_char *) info.id.data });
        if (node[k].id.data == NULL) {
            return NGX_ERROR;
        }

        /* round robin lists a block's addresses in server order, backup
         * servers apart */
        server = uscf->servers->elts;
        server_at = info.block_server - 1;

        node[k].block = uscf;
        node[k].backup_peer = server[server_at].backup;
        node[k].peer = 0;

        for (s = 0; s < server_at; s++) {
            if (server[s].backup == server[server_at].backup) {
                node[k].peer += server[s].naddrs;
            }
        }
    }

    return NGX_OK;
}


/*
 * The servers of an upstream {} block as libcore lists them, for what the
 * poller thread reaches itself (uscf->servers->nelts of them).
 */
sg_block_server_t *
ngx_http_solgate_block_servers(ngx_conf_t *cf,
    ngx_http_upstream_srv_conf_t *uscf)
{
    ngx_uint_t                   s, n;
    sg_block_server_t           *servers;
    ngx_http_upstream_server_t  *server;

    server = uscf->servers->elts;
    n = uscf->servers->nelts;

    servers = ngx_pcalloc(cf->pool, n * sizeof(sg_block_server_t));
    if (servers == NULL) {
        return NULL;
    }

    for (s = 0; s < n; s++) {
        if (server[s].naddrs == 0) {
            /* nginx has refused such a server already; never poll it */
            servers[s].down = 1;
            continue;
        }

        servers[s].address = ngx_http_solgate_sg_str(&server[s].addrs[0].name);
#if (NGX_HAVE_UNIX_DOMAIN)
        servers[s].is_unix =
            server[s].addrs[0].sockaddr->sa_family == AF_UNIX;
#endif
        servers[s].backup = server[s].backup;
        servers[s].down = server[s].down;
    }

    return servers;
}


/*
 * How nginx reaches the host `authority` names: through its upstream {}
 * block, or (an IP address, port 80 when none is given) that address;
 * neither (both NULL) for a name nginx would resolve per request.
 */
ngx_int_t
ngx_http_solgate_reach(ngx_conf_t *cf, ngx_str_t *authority,
    ngx_http_solgate_target_t *target)
{
    ngx_url_t                      u;
    ngx_http_upstream_resolved_t  *address;

    ngx_memzero(target, sizeof(ngx_http_solgate_target_t));

    target->block = ngx_http_solgate_find_block(cf, authority);

    if (target->block != NULL) {
        return NGX_OK;
    }

    ngx_memzero(&u, sizeof(ngx_url_t));
    u.url = *authority;
    u.default_port = 80;
    u.no_resolve = 1;

    if (ngx_parse_url(cf->pool, &u) != NGX_OK || u.naddrs == 0) {
        return NGX_OK;
    }

    address = ngx_pcalloc(cf->pool, sizeof(ngx_http_upstream_resolved_t));
    if (address == NULL) {
        return NGX_ERROR;
    }

    address->host = *authority;
    address->port = u.port;
    address->naddrs = 1;
    address->sockaddr = u.addrs[0].sockaddr;
    address->socklen = u.addrs[0].socklen;
    address->name = u.addrs[0].name;

    target->address = address;

    return NGX_OK;
}


/* Whether `uscf` is one of `blocks` (uscf *: solgate_balancer's, ...). */
ngx_uint_t
ngx_http_solgate_block_listed(ngx_array_t *blocks,
    ngx_http_upstream_srv_conf_t *uscf)
{
    ngx_uint_t                      i;
    ngx_http_upstream_srv_conf_t  **listed;

    listed = blocks->elts;

    for (i = 0; i < blocks->nelts; i++) {
        if (listed[i] == uscf) {
            return 1;
        }
    }

    return 0;
}


/* The upstream {} block named `authority`, if one is. */
ngx_http_upstream_srv_conf_t *
ngx_http_solgate_find_block(ngx_conf_t *cf, ngx_str_t *authority)
{
    ngx_uint_t                       i;
    ngx_http_upstream_srv_conf_t   **uscf;
    ngx_http_upstream_main_conf_t   *umcf;

    umcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_upstream_module);
    uscf = umcf->upstreams.elts;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (!(uscf[i]->flags & NGX_HTTP_UPSTREAM_CREATE)
            || uscf[i]->servers == NULL
            || uscf[i]->servers->nelts == 0
            || ngx_http_solgate_is_dispatch_block(uscf[i])
            || uscf[i]->host.len != authority->len
            || ngx_strncasecmp(uscf[i]->host.data, authority->data,
                               authority->len) != 0)
        {
            continue;
        }

        return uscf[i];
    }

    return NULL;
}


static void
ngx_http_solgate_free_core(void *data)
{
    sg_network_free(data);
}


static char *
ngx_http_solgate_check_debounce(ngx_conf_t *cf, void *post, void *data)
{
    ngx_msec_t  *debounce = data;

    if (*debounce > SG_MAX_DEBOUNCE_MS) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"state_poller_debounce\" must be at most %ds",
                           SG_MAX_DEBOUNCE_MS / 1000);
        return NGX_CONF_ERROR;
    }

    if (*debounce < SG_DEFAULT_DEBOUNCE_MS) {
        ngx_conf_log_error(NGX_LOG_WARN, cf, 0,
                           "\"state_poller_debounce\" below %dms acts as "
                           "%dms: the poller ticks every %dms",
                           SG_DEFAULT_DEBOUNCE_MS, SG_DEFAULT_DEBOUNCE_MS,
                           SG_DEFAULT_DEBOUNCE_MS);
    }

    return NGX_CONF_OK;
}


/* 0 (or a few ms) would close every subscription before it says a word */
static char *
ngx_http_solgate_check_ws_idle(ngx_conf_t *cf, void *post, void *data)
{
    ngx_msec_t  *timeout = data;

    if (*timeout < 1000) {
        return "must be at least 1s (a shorter one closes every "
               "subscription before its node sends anything)";
    }

    return NGX_CONF_OK;
}
