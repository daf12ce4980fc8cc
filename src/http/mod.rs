//! The HTTP service: adapters over the screens. One `AppState` built once and shared
//! ([`state`]), one extractor for the opening every route shares ([`extract`]), one `ApiError`
//! ([`error`]), and one file per route family or gateway contract, each handler a few lines
//! that call a screen:
//!
//! - [`screen`]   `POST /v1/screen`: the question (the input screen)
//! - [`tools`]    `POST /v1/tool-calls`: the proposed tool calls (the gate)
//! - [`results`]  `POST /v1/tool-results`: what the tools returned (screened, kept as evidence)
//! - [`context`]  `POST /v1/screen-context`: untrusted documents (the context screen)
//! - [`output`]   `POST /v1/screen-output` and `/stream`: the answer (the output screen)
//! - [`litellm`]  `POST /beta/litellm_basic_guardrail_api`: LiteLLM's Generic Guardrail API
//! - [`nemo`]     `POST /v1/guardrail/checks`, `POST /v1/checks`: NeMo Guardrails' checks APIs
//! - [`webhook`]  `POST /request`, `POST /response`: the Guardrail Webhook API
//! - [`ops`]      `/metrics`, `/healthz`, `/readyz`, `/admin/reload`, and the fallback
//! - [`openapi`]  `GET /openapi.json`: the OpenAPI 3.1 description of every route
//!
//! The gateway contracts share [`gateway`]: their messages, the screens' calls and what they
//! concluded. [`create_app`] serves the route tables, used by `guard serve` and by the
//! integration tests alike. A new entry point (a gateway contract) is one more file and one
//! more line in a table: the line registers the route, puts it in the OpenAPI description and
//! tells the fallback its method.

pub mod auth;
pub mod context;
pub mod error;
pub mod extract;
pub mod gateway;
pub mod litellm;
pub mod nemo;
pub mod openapi;
pub mod ops;
pub mod output;
pub mod records;
pub mod results;
pub mod screen;
pub mod state;
pub mod tools;
pub mod webhook;

pub use state::AppState;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{web, App};
use error::ApiError;

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
        // Every error response of every route: counted by route and code, and the connection
        // closed after it (the request's body may be unread: a client must not hold it open).
        .wrap_fn(|req, srv| {
            let call = srv.call(req);
            async move {
                let mut res = call.await?;
                end_on_error(&mut res);
                Ok(res)
            }
        })
}

/// Count an error response, whichever route or layer answered it, and close its connection
/// after it: the route is the pattern of the route table that matched (a closed set), `other`
/// for none; the code is the `ApiError`'s. Every route's errors pass here (the app wraps every
/// route in it), so none can forget to.
///
/// An error can come before the body was read (a stream's unknown product, a full budget, a
/// body over the limit); kept alive, such a connection would wait for the rest of a body its
/// client need never send, so it is closed instead.
pub fn end_on_error<B>(res: &mut ServiceResponse<B>) {
    if res.response().error().is_some() {
        let head = res.response_mut().head_mut();
        head.set_connection_type(actix_web::http::ConnectionType::Close);
    }
    let Some(code) = res
        .response()
        .error()
        .and_then(|e| e.as_error::<ApiError>())
        .map(ApiError::code)
    else {
        return;
    };
    let req = res.request();
    if let Some(state) = req.app_data::<web::Data<AppState>>() {
        let route = req.match_pattern();
        let route = route.as_deref().unwrap_or("other");
        state.http.record_http_error(route, code);
    }
}

/// A route table, written once: `method "path" => handler;` lines become the constant listing
/// them (the fallback's methods, the OpenAPI test), the function registering them, and the
/// OpenAPI paths of their handlers (each handler carries its `#[utoipa::path]`).
macro_rules! route_table {
    ($(#[$doc:meta])* $table:ident, $register:ident, $paths:ident;
     $( $method:ident $path:literal => $($handler:ident)::+ ; )+) => {
        $(#[$doc])*
        pub const $table: &[(&str, &str)] = &[$( (stringify!($method), $path) ),+];

        fn $register(cfg: &mut web::ServiceConfig) {
            $( cfg.route($path, web::$method().to($($handler)::+)); )+
        }

        #[derive(utoipa::OpenApi)]
        #[openapi(paths($($($handler)::+),+))]
        pub struct $paths;
    };
}

route_table! {
    /// The API's routes, `(method, path)` (the method in lower case).
    API_ROUTES, api_routes, ApiPaths;
    post "/v1/screen" => screen::screen;
    post "/v1/screen-output" => output::screen_output;
    post "/v1/screen-output/stream" => output::screen_output_stream;
    post "/v1/tool-calls" => tools::tool_calls;
    post "/v1/tool-results" => results::tool_results;
    post "/v1/screen-context" => context::screen_context;
    post "/beta/litellm_basic_guardrail_api" => litellm::guardrail;
    post "/v1/guardrail/checks" => nemo::checks;
    post "/v1/checks" => nemo::checks_oss;
    post "/request" => webhook::request;
    post "/response" => webhook::response;
    get "/openapi.json" => openapi::openapi_json;
    post "/admin/reload" => ops::reload;
}

route_table! {
    /// The operator's routes (on `GUARD_OPS_LISTEN` when it is set).
    OPS_ROUTES, ops_routes, OpsPaths;
    get "/metrics" => ops::metrics;
    get "/healthz" => ops::healthz;
    get "/readyz" => ops::readyz;
}
