//! The `/api2/json` router and the request pipeline in PVE's order: authentication (401 after
//! a delay), node reachability (595), a worker slot per node (3 by default; requests queue),
//! injected latency and faults, then the handler. Handlers live in the sibling files.

mod access;
mod access_control;
mod checked;
mod cluster;
mod cluster_cfg;
mod cluster_cfg_jobs;
mod download;
mod firewall;
mod firewall_objects;
mod lxc;
mod lxc_clone;
mod lxc_create;
mod lxc_disk;
mod lxc_net;
mod lxc_status;
mod network;
mod node_read;
mod oci_pull;
mod params;
mod pools;
mod qemu;
mod qemu_clone;
mod qemu_create;
mod qemu_disk;
mod qemu_power;
mod sdn;
mod storage;
mod tasks;
mod upload;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};

pub(crate) use cluster::guest_resource;
pub(crate) use params::Params;

use super::error::{ApiError, ApiResult};
use super::faults::Injected;
use super::model::GuestEvent;
use super::server::Sim;

/// Shared state in handlers.
pub(crate) type SimState = State<Arc<Sim>>;

/// The whole API.
pub(crate) fn router(sim: Arc<Sim>) -> Router {
    let api = Router::new()
        .route("/version", get(cluster::version))
        .route(
            "/access/ticket",
            post(access::ticket).get(access::ticket_form),
        )
        .route("/nodes", get(cluster::nodes))
        .route("/cluster/resources", get(cluster::resources))
        .route("/cluster/nextid", get(cluster::nextid))
        .route("/nodes/{node}/tasks", get(tasks::list))
        .route("/nodes/{node}/tasks/{upid}/status", get(tasks::status))
        .route("/nodes/{node}/tasks/{upid}/log", get(tasks::log))
        .route("/nodes/{node}/storage", get(storage::list))
        .route(
            "/nodes/{node}/storage/{storage}/content",
            get(storage::content),
        )
        .route(
            "/nodes/{node}/storage/{storage}/download-url",
            post(download::download_url),
        )
        .route(
            "/nodes/{node}/storage/{storage}/oci-registry-pull",
            post(oci_pull::oci_registry_pull),
        )
        .route(
            "/nodes/{node}/query-url-metadata",
            get(storage::query_url_metadata),
        )
        // A node's settings.
        .route("/nodes/{node}/status", get(node_read::status))
        .route(
            "/nodes/{node}/dns",
            get(node_read::dns).put(node_read::update_dns),
        )
        .route(
            "/nodes/{node}/hosts",
            get(node_read::hosts).post(cluster_cfg::write_hosts),
        )
        .route(
            "/nodes/{node}/time",
            get(node_read::time).put(node_read::update_time),
        )
        .merge(upload_routes())
        .merge(lxc::routes())
        .merge(qemu_routes())
        // pools and the firewall (helper-sim)
        .route(
            "/pools",
            get(pools::index)
                .post(pools::create)
                .put(pools::update)
                .delete(pools::delete),
        )
        .route(
            "/pools/{poolid}",
            get(pools::read)
                .put(pools::update_one)
                .delete(pools::delete_one),
        )
        .merge(firewall::routes())
        .merge(network::routes())
        .merge(cluster_cfg::routes())
        .merge(sdn::routes())
        .merge(access_control::routes())
        .fallback(not_implemented)
        .method_not_allowed_fallback(not_implemented)
        .layer(middleware::from_fn_with_state(sim.clone(), pipeline))
        .with_state(sim);
    Router::new()
        .nest("/api2/json", api)
        .fallback(not_implemented)
}

/// Files put in a storage through the API (`routes/upload.rs`).
fn upload_routes() -> Router<Arc<Sim>> {
    Router::new()
        .route(
            "/nodes/{node}/storage/{storage}/upload",
            post(upload::upload).layer(axum::extract::DefaultBodyLimit::max(64 << 20)),
        )
        .route(
            "/nodes/{node}/storage/{storage}/content/{volume}",
            axum::routing::delete(upload::delete),
        )
        .route("/storage/{storage}", get(upload::config))
}

/// The QEMU endpoints, each behind its parameter schema (`api_schema::qemu`).
fn qemu_routes() -> Router<Arc<Sim>> {
    use crate::api_schema::qemu as schema;
    use axum::handler::Handler;
    let v = |s: &'static crate::api_schema::Schema| {
        axum::middleware::from_fn_with_state(s, checked::checked)
    };
    let vm = "/nodes/{node}/qemu/{vmid}";
    let config = get(qemu::config.layer(v(&schema::CONFIG_GET)))
        .put(qemu::update_config.layer(v(&schema::CONFIG_PUT)))
        .post(qemu::update_config_async.layer(v(&schema::CONFIG_POST)));
    let cloudinit = get(qemu_disk::cloudinit_pending.layer(v(&schema::GUEST)))
        .put(qemu_disk::cloudinit_update.layer(v(&schema::GUEST)));
    let power = axum::middleware::from_fn(checked::checked_qemu_power);
    Router::new()
        .route(
            "/nodes/{node}/qemu",
            get(qemu::list.layer(v(&schema::LIST)))
                .post(qemu_create::create.layer(v(&schema::CREATE))),
        )
        .route(
            vm,
            axum::routing::delete(qemu_disk::destroy.layer(v(&schema::DESTROY))),
        )
        .route(&format!("{vm}/config"), config)
        .route(
            &format!("{vm}/pending"),
            get(qemu::pending.layer(v(&schema::GUEST))),
        )
        .route(
            &format!("{vm}/clone"),
            post(qemu_clone::clone.layer(v(&schema::CLONE))),
        )
        .route(
            &format!("{vm}/template"),
            post(qemu_clone::template.layer(v(&schema::TEMPLATE))),
        )
        .route(
            &format!("{vm}/resize"),
            put(qemu_disk::resize.layer(v(&schema::RESIZE))),
        )
        .route(&format!("{vm}/cloudinit"), cloudinit)
        .route(
            &format!("{vm}/cloudinit/dump"),
            get(qemu_disk::cloudinit_dump.layer(v(&schema::CLOUDINIT_DUMP))),
        )
        .route(
            &format!("{vm}/status/current"),
            get(qemu::current.layer(v(&schema::GUEST))),
        )
        .route(
            &format!("{vm}/status/{{action}}"),
            post(qemu_power::action.layer(power)),
        )
        .route(
            &format!("{vm}/agent/ping"),
            post(qemu_power::agent_ping.layer(v(&schema::GUEST))),
        )
        .route(
            &format!("{vm}/agent/network-get-interfaces"),
            get(qemu_power::agent_interfaces.layer(v(&schema::GUEST))),
        )
}

async fn not_implemented(method: Method, uri: axum::http::Uri) -> ApiError {
    let path = uri.path().strip_prefix("/api2/json").unwrap_or(uri.path());
    ApiError::not_implemented(method.as_str(), path)
}

/// `(node, vmid)` when the path addresses `/nodes/{node}/...` (and a guest below it).
fn target(path: &str) -> (Option<String>, Option<(String, u32)>) {
    let mut seg = path.trim_start_matches('/').split('/');
    if seg.next() != Some("nodes") {
        return (None, None);
    }
    let node = seg.next().map(str::to_owned);
    let guest = match (seg.next(), seg.next().and_then(|v| v.parse().ok())) {
        (Some(kind @ ("lxc" | "qemu")), Some(vmid)) => Some((kind.to_owned(), vmid)),
        _ => None,
    };
    (node, guest)
}

async fn pipeline(State(sim): SimState, req: Request, next: Next) -> Response {
    let response = serve(&sim, req, next).await;
    if response.status() == axum::http::StatusCode::UNAUTHORIZED {
        // a failed login: answered late, like pveproxy, without holding a worker
        tokio::time::sleep(sim.opts.auth_failure_delay).await;
    }
    if sim.faults.legacy_error_bodies()
        && let Some(err) = response.extensions().get::<ApiError>()
    {
        return err.render(true);
    }
    response
}

async fn serve(sim: &Sim, mut req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    match authenticate(sim, &req, &path) {
        Ok(Some(caller)) => {
            req.extensions_mut().insert(caller);
        }
        Ok(None) => {}
        Err(e) => return e.into_response(),
    }
    let (node, guest) = target(&path);
    if let Some(n) = &node
        && sim.faults.is_offline(n)
    {
        return ApiError::proxy(595, "No route to host").into_response();
    }
    let Some(pool) = sim.workers_for(node.as_deref()) else {
        return next.run(req).await;
    };
    let Ok(_permit) = pool.acquire_owned().await else {
        return ApiError::die("api server is shutting down").into_response();
    };
    let latency = sim.faults.latency_for(&path);
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let is_write = method != Method::GET;
    match sim.faults.decide(guest.is_some() && is_write, is_write) {
        Injected::None if is_write => run_watching_self(sim, guest, &path, req, next).await,
        Injected::None => next.run(req).await,
        Injected::LockTimeout => lock_timeout(guest).into_response(),
        Injected::Transient => ApiError::proxy(596, "Connection timed out").into_response(),
        Injected::LoseResponse => {
            let _ = next.run(req).await;
            ApiError::proxy(596, "Connection timed out").into_response()
        }
    }
}

/// Runs a write; when it drops the network link of the guest the simulated client runs on
/// (`FaultSettings::self_guest`) or stops/reboots it, the change happens but the client's
/// connection is cut: it gets `596 Connection reset by peer` instead of the answer.
async fn run_watching_self(
    sim: &Sim,
    guest: Option<(String, u32)>,
    path: &str,
    req: Request,
    next: Next,
) -> Response {
    let Some(vmid) = guest
        .map(|(_, id)| id)
        .filter(|id| sim.faults.self_guest() == Some(*id))
    else {
        return next.run(req).await;
    };
    let seen = sim
        .cluster()
        .guests
        .get(&vmid)
        .map_or(0, |g| g.events.len());
    let response = next.run(req).await;
    let power = ["/status/stop", "/status/shutdown", "/status/reboot"]
        .iter()
        .any(|p| path.ends_with(p));
    let link = sim.cluster().guests.get(&vmid).is_some_and(|g| {
        g.events.iter().skip(seen).any(|e| {
            matches!(
                e,
                GuestEvent::LinkRecreated(_)
                    | GuestEvent::LinkReplugged(_)
                    | GuestEvent::LinkDeleted(_)
            )
        })
    });
    if response.status().is_success() && (power || link) {
        return ApiError::proxy(596, "Connection reset by peer").into_response();
    }
    response
}

fn lock_timeout(guest: Option<(String, u32)>) -> ApiError {
    match guest {
        Some((kind, vmid)) if kind == "qemu" => ApiError::die(format!(
            "can't lock file '/var/lock/qemu-server/lock-{vmid}.conf' - got timeout"
        )),
        Some((_, vmid)) => ApiError::die(format!(
            "can't lock file '/run/lock/lxc/pve-config-{vmid}.lock' - got timeout"
        )),
        None => ApiError::die("got timeout"),
    }
}

/// The caller, `None` for the calls PVE allows without auth, or a 401.
fn authenticate(sim: &Sim, req: &Request, path: &str) -> ApiResult<Option<super::auth::Caller>> {
    let rel = path.strip_prefix("/api2/json").unwrap_or(path);
    if rel == "/access/ticket" && (req.method() == Method::GET || req.method() == Method::POST) {
        return Ok(None);
    }
    let headers = req.headers();
    if let Some(auth) = headers.get("authorization").and_then(|v| v.to_str().ok())
        && auth.starts_with("PVEAPIToken")
    {
        return sim.auth.check_token(auth).map(Some);
    }
    let ticket = headers
        .get_all("cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix("PVEAuthCookie="))
        .map(|t| {
            percent_encoding::percent_decode_str(t)
                .decode_utf8_lossy()
                .into_owned()
        });
    let Some(ticket) = ticket else {
        return Err(ApiError::unauthorized("No ticket"));
    };
    let caller = sim.auth.verify_ticket(&ticket)?;
    if req.method() != Method::GET {
        let csrf = headers
            .get("csrfpreventiontoken")
            .and_then(|v| v.to_str().ok());
        sim.auth.verify_csrf(&caller.user, csrf)?;
    }
    Ok(Some(caller))
}

/// `{"data": ...}`.
pub(crate) fn data(value: serde_json::Value) -> Response {
    axum::Json(serde_json::json!({ "data": value })).into_response()
}

/// Parses the `{vmid}` path segment (`pve-vmid`: 100..999999999).
pub(crate) fn parse_vmid(text: &str) -> ApiResult<u32> {
    match text.parse::<u32>() {
        Ok(n) if (100..=999_999_999).contains(&n) => Ok(n),
        Ok(n) if n < 100 => Err(ApiError::param(
            "vmid",
            "value must have a minimum value of 100",
        )),
        _ => Err(ApiError::param(
            "vmid",
            format!("type check ('integer') failed - got '{text}'"),
        )),
    }
}
