/*
 * Solgate core: the C ABI between the nginx module and the C++ core.
 *
 * Rules of this boundary:
 * - plain C types only; strings are (pointer, length) pairs, never
 *   NUL-terminated unless said so;
 * - handles are opaque and freed by the function named beside them;
 * - no function throws, calls back into nginx, or keeps a pointer the
 *   caller passed in after it returns (unless said so);
 * - functions that can fail return SG_OK or a negative SG_ code.
 */

#ifndef SOLGATE_SOLGATE_H
#define SOLGATE_SOLGATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SOLGATE_BUILDING_CORE)
#define SG_API __attribute__((visibility("default")))
#else
#define SG_API
#endif

#define SG_OK          0
#define SG_ERROR      -1     /* internal failure, e.g. out of memory */
#define SG_DECLINED   -2     /* input not recognised / nothing to do */

typedef struct {
    const char  *data;
    size_t       len;
} sg_str_t;


/* Clusters and their genesis hashes */

typedef enum {
    SG_CLUSTER_MAINNET_BETA = 0,
    SG_CLUSTER_DEVNET,
    SG_CLUSTER_TESTNET,
    SG_CLUSTER_CUSTOM
} sg_cluster_t;

/* SG_OK, or SG_DECLINED for a name that is not a cluster */
SG_API int sg_cluster_parse(const char *name, size_t len, sg_cluster_t *out);
SG_API sg_str_t sg_cluster_name(sg_cluster_t cluster);
/* empty for SG_CLUSTER_CUSTOM: a custom cluster's hash is not known */
SG_API sg_str_t sg_cluster_genesis_hash(sg_cluster_t cluster);


/* Commitment levels; legacy names map to the current three */

typedef enum {
    SG_COMMITMENT_NONE = 0,
    SG_COMMITMENT_PROCESSED,
    SG_COMMITMENT_CONFIRMED,
    SG_COMMITMENT_FINALIZED
} sg_commitment_t;

SG_API int sg_commitment_parse(const char *name, size_t len,
    sg_commitment_t *out);
SG_API sg_str_t sg_commitment_name(sg_commitment_t commitment);


/* One HTTP request body: a JSON-RPC call or a batch of them */

typedef struct sg_request_s  sg_request_t;

typedef enum {
    SG_ROUTE_FORWARD = 0,    /* send the body to an upstream */
    SG_ROUTE_ANSWER          /* answer with http_status and body */
} sg_route_kind_t;

typedef struct {
    sg_route_kind_t  kind;
    unsigned         http_status;
    sg_str_t         body;           /* owned by the request */
} sg_route_t;

typedef struct {
    sg_cluster_t     cluster;
    sg_commitment_t  default_commitment;  /* NONE: Solana's own default */
} sg_network_conf_t;

/*
 * Parses a request body.  Never fails on bad input: a body that is not
 * valid JSON-RPC yields a request whose route is the matching error
 * answer.  NULL only when memory ran out.
 */
SG_API sg_request_t *sg_request_parse(const char *body, size_t len);
SG_API void sg_request_free(sg_request_t *req);

/* Decides whether to answer locally or forward.  SG_OK or SG_ERROR. */
SG_API int sg_request_route(sg_request_t *req, const sg_network_conf_t *conf,
    sg_route_t *out);

/*
 * The answer given when no upstream could serve the request: one JSON-RPC
 * error per call (an array for a batch), each echoing its call's id.
 */
SG_API int sg_request_fail(sg_request_t *req, unsigned http_status,
    int code, const char *message, size_t message_len, sg_route_t *out);

/* "getSlot" for a single call, "batch" for a batch, "" when unreadable */
SG_API sg_str_t sg_request_method(const sg_request_t *req);
/* number of calls (1 for a single call, N for a batch, 0 if unreadable) */
SG_API size_t sg_request_call_count(const sg_request_t *req);
/* the effective commitment of a single call (request's own, else default) */
SG_API sg_commitment_t sg_request_commitment(const sg_request_t *req,
    const sg_network_conf_t *conf);

/*
 * Writes a standalone JSON-RPC error envelope into buf (id null), for errors
 * raised before the body could be read (413, 408, ...).  Returns the length
 * written, or 0 when buf is too small.
 */
SG_API size_t sg_write_error(char *buf, size_t size, int code,
    const char *message, size_t message_len);


/* Upstream choice */

/*
 * Round-robin over `count` upstreams starting at turn % count, skipping
 * those whose tried[i] is non-zero.  SG_OK with *picked set, or SG_DECLINED
 * when every upstream was tried.
 */
SG_API int sg_pick_round_robin(size_t count, uint64_t turn,
    const unsigned char *tried, size_t *picked);


/* Build information, for the startup log line */
SG_API const char *sg_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SOLGATE_SOLGATE_H */
