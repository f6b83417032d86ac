#include "status/status_page.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "blocks/block_source.h"
#include "blocks/blocks_view.h"
#include "rpc/cluster.h"
#include "routing/request_metrics.h"
#include "slots/state_poller.h"
#include "slots/upstream_history.h"
#include "status/html_text.h"
#include "status/lag_chart.h"
#include "status/state_json.h"
#include "status/status_common.h"

namespace solgate {
namespace {

// The page's look: cards on a light background, one colour per series
// (the chart's paths use the same variables).
constexpr const char kStyle[] = R"css(
:root{--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--card:#fff;--bg:#f5f6f8;
--good:#15803d;--warn:#b45309;--bad:#b91c1c;--slot:#2563eb;--ingest:#d97706}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:1280px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:22px;margin:0 0 2px}
h2{font-size:19px;margin:28px 0 8px;padding-bottom:4px;border-bottom:2px solid var(--line)}
h2 small,h3 small{font-weight:normal;color:var(--muted);font-size:13px}
h3{font-size:16px;margin:0}
h4{font-size:14px;margin:14px 0 4px}
.meta{color:var(--muted);margin:0}
table{border-collapse:collapse;background:var(--card);margin:4px 0 10px}
th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
th{font-weight:600;color:#374151}
th:first-child,td:first-child{text-align:left}
.cards{display:flex;flex-direction:column;gap:14px}
.upstream{background:var(--card);border:1px solid var(--line);
border-left:5px solid var(--good);border-radius:6px;padding:10px 14px}
.upstream.unhealthy,.upstream.lagging{border-left-color:var(--warn)}
.upstream.cordoned{border-left-color:var(--bad)}
.upstream header{display:flex;flex-wrap:wrap;align-items:center;gap:6px;margin-bottom:4px}
.upstream .body{display:flex;flex-wrap:wrap;gap:6px 24px;align-items:flex-start}
.plot{flex:3 1 460px;min-width:0}
.pill{display:inline-block;border-radius:9px;padding:0 8px;font-size:12px;color:#fff}
.pill.good{background:var(--good)}.pill.warn{background:var(--warn)}
.pill.bad{background:var(--bad)}.pill.info{background:#6b7280}
.cordon{margin:2px 0 6px;padding:4px 8px;background:#fef2f2;border-radius:4px;
color:#7f1d1d;overflow-wrap:anywhere}
.figures{flex:2 1 340px;margin:0}
.figures th{text-align:left;font-weight:normal;color:var(--muted);white-space:normal}
.figures small{color:var(--muted)}
.figures td{text-align:right}
.legend{margin:0;color:var(--muted);font-size:12px}
.key{display:inline-block;width:14px;height:3px;vertical-align:middle;margin:0 4px 0 8px}
.key.slot-lag{background:var(--slot)}.key.ingestion-lag{background:var(--ingest)}
svg.chart{display:block;width:100%;height:auto}
svg.chart .grid{stroke:var(--line);stroke-width:1}
svg.chart text{fill:var(--muted);font-size:11px}
svg.chart .series{fill:none;stroke-width:2;stroke-linejoin:round}
svg.chart path.slot-lag{stroke:var(--slot)}
svg.chart path.ingestion-lag{stroke:var(--ingest);stroke-width:5;stroke-opacity:.55}
svg.chart circle.slot-lag{fill:var(--slot)}
svg.chart circle.ingestion-lag{fill:var(--ingest)}
svg.chart .threshold{stroke-dasharray:5 4;stroke-width:1}
svg.chart line.slot-lag{stroke:var(--slot)}
svg.chart line.ingestion-lag{stroke:var(--ingest)}
svg.chart .empty{font-size:14px}
.blocks{background:var(--card);border:1px solid var(--line);border-radius:6px;
padding:10px 12px;margin-top:14px}
.blocks table{margin-right:18px;display:inline-table;vertical-align:top}
)css";

// Fetches the page again every few seconds and swaps its <main> in; on a
// failure says so and keeps trying. Without it the meta refresh reloads.
constexpr const char kScript[] = R"js(
(function(){
  var every=%EVERY%;
  function mark(text){var s=document.getElementById('solgate-live');if(s)s.textContent=text;}
  function refresh(){
    fetch(location.href,{cache:'no-store',credentials:'same-origin'})
    .then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);return r.text();})
    .then(function(text){
      var fresh=new DOMParser().parseFromString(text,'text/html').getElementById('solgate-status');
      var old=document.getElementById('solgate-status');
      if(!fresh||!old)throw new Error('no status in the answer');
      old.replaceWith(document.adoptNode(fresh));
      var root=document.documentElement;
      root.dataset.refreshes=(+root.dataset.refreshes||0)+1;
      mark('live: updated every '+every/1000+' s');
    })
    .catch(function(e){mark('live updates failing ('+e.message+'), retrying');})
    .then(function(){setTimeout(refresh,every);});
  }
  mark('live: updated every '+every/1000+' s');
  setTimeout(refresh,every);
})();
)js";

std::string_view HealthText(HealthOutcome health) {
    switch (health) {
    case HealthOutcome::kOk:     return "ok";
    case HealthOutcome::kFailed: return "failed";
    default:                     return "not asked yet";
    }
}

std::string_view GenesisText(GenesisCheck genesis) {
    switch (genesis) {
    case GenesisCheck::kMatches: return "matches";
    case GenesisCheck::kDiffers: return "differs";
    default:                     return "unchecked";
    }
}

std::string_view OwnerText(CordonOwner owner) {
    switch (owner) {
    case CordonOwner::kPoller:   return "the state poller";
    case CordonOwner::kOperator: return "an operator";
    default:                     return "unknown";
    }
}

void Pill(std::string& out, const char* kind, std::string_view text) {
    out += "<span class=\"pill ";
    out += kind;
    out += "\">";
    AppendHtml(out, text);
    out += "</span>";
}

// <th>name</th><td>value</td>, the value escaped.
void Cell(std::string& out, std::string_view name, std::string_view value) {
    out += "<th>";
    AppendHtml(out, name);
    out += "</th><td>";
    AppendHtml(out, value);
    out += "</td>";
}

// A table row of plain values, the first a heading cell's text.
void Row(std::string& out, std::initializer_list<std::string> cells) {
    out += "<tr>";
    for (const std::string& cell : cells) {
        out += "<td>";
        AppendHtml(out, cell);
        out += "</td>";
    }
    out += "</tr>";
}

void HeadRow(std::string& out, std::initializer_list<const char*> names) {
    out += "<tr>";
    for (const char* name : names) {
        out += "<th>";
        out += name;
        out += "</th>";
    }
    out += "</tr>";
}

std::string SlotText(uint64_t slot) {
    return slot == 0 ? std::string("—") : std::to_string(slot);
}

// "poller" or "operator" with the reason and since when; nothing when the
// upstream is in rotation.
void AppendCordon(std::string& out, const Network& network, size_t i) {
    CordonState cordon = network.cordons().Cordon(i);
    if (cordon.owner == CordonOwner::kNone) {
        return;
    }
    std::string reason = CordonReason(network, i);
    out += "<p class=\"cordon\">Cordoned by <b>";
    AppendHtml(out, OwnerText(cordon.owner));
    out += "</b> since ";
    AppendHtml(out, FormatUtc(cordon.since_wall_ms));
    out += reason.empty() ? std::string(" (no reason given)") : ": ";
    AppendHtml(out, reason);
    out += "</p>";
}

struct UpstreamFigures {
    uint64_t slot_lag = 0;
    bool lagging = false;
    bool polls_failing = false;   // its slots are the last known ones
    bool healthy = true;
    bool cordoned = false;
    bool ejected = false;
    int64_t drain_for_ms = 0;   // an operator's drain: its time left
};

UpstreamFigures FiguresOf(const Network& network, size_t i,
                          int64_t now_mono_ms) {
    UpstreamFigures f;
    f.slot_lag = network.SlotLagInNetwork(i);
    f.lagging = network.LaggingInNetwork(i);
    f.polls_failing = !network.SlotsCurrent(i);
    f.healthy = UpstreamHealthy(network, i);
    f.cordoned = network.Cordoned(i);
    f.ejected = network.host(i).ejected_until_ms.load() > now_mono_ms;
    f.drain_for_ms = network.DrainLeft(i, now_mono_ms);
    return f;
}

void AppendUpstreamHeader(std::string& out, const Network& network, size_t i,
                          const UpstreamFigures& f) {
    out += "<header><h3>";
    AppendHtml(out, network.upstream(i).id);
    out += "</h3>";
    Pill(out, f.healthy ? "good" : "bad", f.healthy ? "healthy" : "unhealthy");
    if (f.cordoned) {
        Pill(out, "bad", "cordoned");
    }
    if (f.lagging) {
        Pill(out, "warn", "lagging");
    }
    if (f.polls_failing) {
        Pill(out, "bad", "slot polls failing");
    }
    if (f.ejected) {
        Pill(out, "warn", "ejected");
    }
    if (f.drain_for_ms > 0) {
        Pill(out, "warn", "draining " + AgeText(f.drain_for_ms));
    }
    if (network.upstream(i).routing.backup) {
        Pill(out, "info", "backup");
    }
    out += "</header>";
}

void AppendRates(std::string& out, const UpstreamHistory& history,
                 const UpstreamTraffic& traffic, int64_t now_mono_ms) {
    std::optional<TrafficRates> rates =
        RatesSince(history, now_mono_ms, traffic.requests, traffic.errors);
    // the window the rates are over: a minute once the page has one
    std::string window =
        rates ? " <small>over " + std::to_string(rates->window_ms / 1000) +
                    " s</small>"
              : std::string();
    out += "<tr><th>requests/s</th><td>";
    out += rates ? RateText(rates->requests_per_s) + window : "—";
    out += "</td><th>errors/s</th><td>";
    out += rates ? RateText(rates->errors_per_s) + window : "—";
    out += "</td></tr><tr>";
    Cell(out, "requests", std::to_string(traffic.requests));
    Cell(out, "errors", std::to_string(traffic.errors));
    out += "</tr>";
}

void AppendFigures(std::string& out, const Network& network, size_t i,
                   const UpstreamFigures& f, const UpstreamTraffic& traffic,
                   int64_t now_mono_ms) {
    const SlotStore& views = network.slots();
    const UpstreamHostRecord& host = network.host(i);
    out += "<table class=\"figures\"><tr>";
    Cell(out, "processed slot", SlotText(views.View(i, kSlotProcessed)));
    Cell(out, "finalized slot", SlotText(views.View(i, kSlotFinalized)));
    out += "</tr><tr>";
    Cell(out, "shred-insert slot", SlotText(views.View(i, kSlotShred)));
    Cell(out, "observed slot", SlotText(views.Observed(i)));
    out += "</tr><tr>";
    Cell(out, "slot lag",
         f.polls_failing ? std::string("unknown") : std::to_string(f.slot_lag));
    Cell(out, "ingestion lag", std::to_string(IngestionLag(network, i)));
    out += "</tr>";
    AppendRates(out, host.history, traffic, now_mono_ms);
    out += "<tr>";
    Cell(out, "getHealth", HealthText(views.Health(i)));
    Cell(out, "genesis hash", GenesisText(views.Genesis(i)));
    out += "</tr><tr>";
    uint32_t latency_us = host.latency_ewma_us.load();
    // failed polls take no round trip: the figure is from before them
    Cell(out, "poll round trip",
         latency_us == 0 ? std::string("—")
         : f.polls_failing
             ? AgeText(latency_us / 1000) + " (before its polls failed)"
             : AgeText(latency_us / 1000));
    Cell(out, "weight", std::to_string(network.upstream(i).routing.weight));
    out += "</tr>";
    if (ReadCounter(network.counters().fleet_link) != kFleetLinkNone) {
        // fleet mode: its slots, health and round trip are that host's
        std::string by = host.polled_by.Read();
        out += "<tr>";
        Cell(out, "polled by", by.empty() ? "this host" : by);
        out += "</tr>";
    }
    if (!network.upstream(i).pubsub.url.empty()) {
        out += "<tr>";
        Cell(out, "subscriptions",
             std::to_string(std::max<int64_t>(host.ws_open.load(), 0)));
        out += "</tr>";
    }
    out += "</table>";
}

void AppendUpstream(std::string& out, const Network& network, size_t i,
                    const UpstreamTraffic& traffic, int64_t now_mono_ms) {
    UpstreamFigures f = FiguresOf(network, i, now_mono_ms);
    out += "<article class=\"upstream";
    out += f.cordoned ? " cordoned"
           : f.lagging ? " lagging"
           : !f.healthy ? " unhealthy"
                        : "";
    out += "\" data-upstream=\"";
    AppendHtml(out, network.upstream(i).id);
    out += "\">";
    AppendUpstreamHeader(out, network, i, f);
    AppendCordon(out, network, i);
    out += "<div class=\"body\"><div class=\"plot\">";
    LagChartLines lines;
    lines.max_slot_lag = network.settings().max_slot_lag;
    lines.ingestion_threshold = kMaxShredInsertSlotLag;
    AppendLagChart(out, network.upstream(i).id,
                   ReadLags(network.host(i).history, now_mono_ms), lines);
    out += "<p class=\"legend\"><span class=\"key slot-lag\"></span>slot lag "
           "behind the network<span class=\"key ingestion-lag\"></span>"
           "ingestion lag (shred-insert watermark); the highest per " +
           std::to_string(kHistoryStepMs / 1000) + " s</p></div>";
    AppendFigures(out, network, i, f, traffic, now_mono_ms);
    out += "</div></article>";
}

std::string LaneTitle(const LaneInfo& lane) {
    return lane.id == kAllLane ? std::string("all (network-wide)") : lane.name;
}

// A lane's upstreams by id: two lanes may share a name, never members.
std::string LaneMembers(const Network& network, const LaneInfo& lane) {
    std::string ids;
    for (size_t i : lane.members) {
        if (!ids.empty()) {
            ids += ", ";
        }
        ids += network.upstream(i).id;
    }
    return ids;
}

// The served tip of the network-wide lane and of every lane the use-
// upstream selectors formed.
void AppendLanes(std::string& out, const Network& network,
                 int64_t now_mono_ms) {
    out += "<table class=\"tips\">";
    HeadRow(out, {"lane", "upstreams", "processed tip", "finalized tip",
                  "behind the highest head", "tip last moved"});
    for (const LaneInfo& lane : network.tips().Lanes()) {
        auto processed = network.tips().Axis(lane.id, kAxisProcessed).Read();
        auto finalized = network.tips().Axis(lane.id, kAxisFinalized).Read();
        uint64_t behind = processed.max_head > processed.served
                              ? processed.max_head - processed.served
                              : 0;
        Row(out, {LaneTitle(lane),
                  lane.id == kAllLane ? std::to_string(network.size())
                                      : LaneMembers(network, lane),
                  SlotText(processed.served), SlotText(finalized.served),
                  std::to_string(behind),
                  processed.anchor_ms == 0
                      ? std::string("—")
                      : AgeText(now_mono_ms - processed.anchor_ms) + " ago"});
    }
    out += "</table>";
}

void AppendCache(std::string& out, const BlocksView& blocks) {
    const BlocksHostCounters& c = blocks.counters();
    out += "<table><tr><th colspan=\"2\">cache</th></tr>";
    if (std::optional<BlockStore::Totals> totals = blocks.CacheTotals()) {
        uint64_t max = blocks.conf().max_bytes();
        Row(out, {"size", BytesText(totals->bytes) + " of " +
                              (max == 0 ? std::string("no limit")
                                        : BytesText(max))});
        Row(out, {"blocks", std::to_string(totals->entries)});
        Row(out, {"evictions", std::to_string(totals->evictions)});
    } else {
        Row(out, {"size", "not open in this worker"});
    }
    Row(out, {"stored", std::to_string(ReadCounter(c.stored))});
    Row(out, {"store failures", std::to_string(ReadCounter(c.store_failures))});
    out += "</table>";
}

void AppendServed(std::string& out, const BlocksView& blocks) {
    const BlocksHostCounters& c = blocks.counters();
    out += "<table><tr><th colspan=\"2\">getBlock answers</th></tr>";
    for (int s = 0; s < kSourceCount; s++) {
        Row(out, {"from " + std::string(BlockSourceName(s)),
                  std::to_string(ReadCounter(c.served[s]))});
    }
    Row(out, {"not on the tier", std::to_string(ReadCounter(c.tier_answers))});
    Row(out, {"waited for another's fetch",
              std::to_string(ReadCounter(c.lock_waits))});
    Row(out, {"unauthorized", std::to_string(ReadCounter(c.unauthorized))});
    std::optional<uint64_t> first = blocks.FirstAvailableBlock();
    Row(out, {"first available block",
              first ? std::to_string(*first) : std::string("—")});
    out += "</table>";
}

// One row per plan with a long-term storage queue.
void AppendQueues(std::string& out, const BlocksView& blocks,
                  int64_t now_mono_ms) {
    std::string rows;
    for (size_t p = 0; p < blocks.conf().plans().size(); p++) {
        std::optional<QueueStats> q = blocks.Queue(p, now_mono_ms);
        if (!q) {
            continue;
        }
        Row(rows, {blocks.conf().plans()[p].name, std::to_string(q->depth),
                   std::to_string(q->in_flight),
                   q->depth == 0 ? std::string("—") : AgeText(q->oldest_wait_ms),
                   std::to_string(q->retrieved), std::to_string(q->failed),
                   std::to_string(q->dropped), std::to_string(q->queue_full),
                   std::to_string(ReadCounter(
                       blocks.counters().allowance_refusals[p]))});
    }
    out += "<h4>Long-term storage queues</h4>";
    if (rows.empty()) {
        out += "<p class=\"meta\">no plan with long-term storage</p>";
        return;
    }
    out += "<table>";
    HeadRow(out, {"plan", "queued", "retrieving", "oldest waits", "retrieved",
                  "failed", "dropped", "refused (full)",
                  "refused (allowance)"});
    out += rows + "</table>";
}

// Peers by name: their URLs may carry a key, as upstream URLs do.
void AppendPeers(std::string& out, const BlocksView& blocks) {
    const std::vector<BlockPeer>& peers = blocks.conf().peers();
    const BlocksHostCounters& c = blocks.counters();
    // other regions' gateways, and the hosts of this region in a fleet
    out += "<h4>Peers</h4>";
    if (peers.empty()) {
        out += "<p class=\"meta\">none</p>";
        return;
    }
    out += "<table>";
    HeadRow(out, {"peer", "fetches", "failures", "copies"});
    for (size_t p = 0; p < peers.size(); p++) {
        Row(out, {peers[p].name, std::to_string(ReadCounter(c.peer_fetches[p])),
                  std::to_string(ReadCounter(c.peer_failures[p])),
                  std::to_string(ReadCounter(c.peer_copies[p]))});
    }
    out += "</table>";
}

void AppendBlocks(std::string& out, const BlocksView& blocks,
                  int64_t now_mono_ms) {
    out += "<section class=\"blocks\"><h3>Cube Runner <small>region ";
    AppendHtml(out, blocks.conf().region());
    out += "</small></h3>";
    AppendCache(out, blocks);
    AppendServed(out, blocks);
    AppendQueues(out, blocks, now_mono_ms);
    AppendPeers(out, blocks);
    out += "</section>";
}

void AppendNetwork(std::string& out, const Network& network,
                   int64_t now_mono_ms) {
    size_t in_rotation = 0;
    for (size_t i = 0; i < network.size(); i++) {
        in_rotation += network.Cordoned(i) ? 0 : 1;
    }
    out += "<section class=\"network\" data-network=\"";
    AppendHtml(out, network.name());
    out += "\"><h2>";
    AppendHtml(out, network.name());
    out += " <small>";
    AppendHtml(out, ClusterName(network.settings().cluster));
    out += "</small></h2><p class=\"meta\">";
    out += std::to_string(network.size()) + " upstreams, " +
           std::to_string(in_rotation) + " in rotation; max_slot_lag " +
           std::to_string(network.settings().max_slot_lag) +
           "; indexed tip " + SlotText(network.CurrentTips().indexed);
    switch (ReadCounter(network.counters().fleet_link)) {
    case kFleetLinkUp:
        out += "; fleet: shared state up";
        break;
    case kFleetLinkDown:
        out += "; fleet: <b>shared state unreachable</b>, this host routes "
               "on its own state and polls every upstream";
        break;
    default:
        break;
    }
    out += "</p>";
    AppendLanes(out, network, now_mono_ms);
    std::vector<UpstreamTraffic> traffic = UpstreamTrafficOf(network);
    out += "<div class=\"cards\">";
    for (size_t i = 0; i < network.size(); i++) {
        AppendUpstream(out, network, i, traffic[i], now_mono_ms);
    }
    out += "</div>";
    if (const BlocksView* blocks = BoundBlocks(network)) {
        AppendBlocks(out, *blocks, now_mono_ms);
    }
    out += "</section>";
}

void AppendHead(std::string& out) {
    out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, "
           "initial-scale=1\"><title>Solgate status</title>"
           "<noscript><meta http-equiv=\"refresh\" content=\"" +
           std::to_string(kStatusReloadSeconds) +
           "\"></noscript><style>";
    out += kStyle;
    out += "</style></head><body>";
}

void AppendScript(std::string& out) {
    std::string script = kScript;
    std::string every = std::to_string(kStatusLiveSeconds * 1000);
    script.replace(script.find("%EVERY%"), 7, every);
    out += "<script>" + script + "</script>";
}

}  // namespace

std::string RenderStatusPage(const std::vector<const Network*>& networks,
                             int64_t now_mono_ms, int64_t now_wall_ms) {
    std::string out;
    out.reserve(32768);
    AppendHead(out);
    out += "<main id=\"solgate-status\"><header><h1>Solgate status</h1>"
           "<p class=\"meta\">as of ";
    AppendHtml(out, FormatUtc(now_wall_ms));
    out += " (this host) &middot; <span id=\"solgate-live\">reloads every " +
           std::to_string(kStatusReloadSeconds) + " s</span></p></header>";
    std::vector<const Network*> bound = BoundNetworks(networks);
    if (bound.empty()) {
        out += "<p>No network is ready yet.</p>";
    }
    for (const Network* network : bound) {
        AppendNetwork(out, *network, now_mono_ms);
    }
    out += "</main>";
    AppendScript(out);
    out += "</body></html>\n";
    return out;
}

}  // namespace solgate
