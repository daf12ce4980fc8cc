//! The HTTP service: adapters over the screens. One `AppState` built once and shared
//! ([`state`]), one extractor for the opening every route shares ([`extract`]), one `ApiError`
//! ([`error`]), and one file per route family, each handler a few lines that call a screen:
//!
//! - [`screen`]   `POST /v1/screen`: the question (the input screen)
//! - [`tools`]    `POST /v1/tool-calls`: the proposed tool calls (the gate)
//! - [`context`]  `POST /v1/screen-context`: untrusted documents (the context screen)
//! - [`output`]   `POST /v1/screen-output` and `/stream`: the answer (the output screen)
//! - [`ops`]      `/metrics`, `/healthz`, `/readyz`, `/admin/reload`, and the fallback
//!
//! [`create_app`] is the route table, used by `guard serve` and by the integration tests
//! alike. A new entry point (a gateway contract) is one more file and one more line here.

pub mod auth;
pub mod context;
pub mod error;
pub mod extract;
pub mod ops;
pub mod output;
pub mod records;
pub mod screen;
pub mod state;
pub mod tools;

pub use state::AppState;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{web, App};

/// What an app serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The API (and the ops routes, unless `GUARD_OPS_LISTEN` gives them their own address).
    Api,
    /// The ops routes alone, on `GUARD_OPS_LISTEN`.
    Ops,
}

/// The route table.
pub fn create_app(
    state: web::Data<AppState>,
    surface: Surface,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let api = surface == Surface::Api;
    let ops = surface == Surface::Ops || state.ops_on_main;
    App::new()
        .app_data(state)
        .configure(|cfg| {
            if api {
                api_routes(cfg);
            }
            if ops {
                ops_routes(cfg);
            }
        })
        .default_service(web::to(ops::fallback))
}

fn api_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/screen", web::post().to(screen::screen))
        .route("/v1/screen-output", web::post().to(output::screen_output))
        .route(
            "/v1/screen-output/stream",
            web::post().to(output::screen_output_stream),
        )
        .route("/v1/tool-calls", web::post().to(tools::tool_calls))
        .route(
            "/v1/screen-context",
            web::post().to(context::screen_context),
        )
        .route("/admin/reload", web::post().to(ops::reload));
}

fn ops_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(ops::metrics))
        .route("/healthz", web::get().to(ops::healthz))
        .route("/readyz", web::get().to(ops::readyz));
}
