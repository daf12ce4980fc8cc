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
use actix_web::http::Method;
use actix_web::{web, App};
use error::ApiError;
use futures_util::future::LocalBoxFuture;
use std::rc::Rc;
use std::task::{Context, Poll};

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
    let mut table = Vec::new();
    if api {
        api_routes(&mut table);
    }
    if ops {
        ops_routes(&mut table);
    }
    let paths: Rc<[&'static str]> = table.iter().map(|entry| entry.path).collect();
    App::new()
        .app_data(state)
        .default_service(Dispatch {
            table,
            fallback: web::to(ops::fallback),
        })
        // Every error response of every route: counted by route and code, and the connection
        // closed after it (the request's body may be unread: a client must not hold it open).
        .wrap_fn(move |req, srv| {
            let call = srv.call(req);
            let paths = Rc::clone(&paths);
            async move {
                let mut res = call.await?;
                end_on_error(&mut res, &paths);
                Ok(res)
            }
        })
}

/// One line of a route table: the method, the path and its handler.
struct Entry {
    method: Method,
    path: &'static str,
    route: actix_web::Route,
}

/// The method a table names (in lower case, as the fallback reads it too).
fn method(name: &str) -> Method {
    match name {
        "get" => Method::GET,
        _ => Method::POST,
    }
}

type RouteService = <actix_web::Route as ServiceFactory<ServiceRequest>>::Service;

/// The app's one service: a request goes to the handler of its exact path and method, found
/// in one pass over the table, else to the fallback (404, or 405 for a known path). actix's
/// own router tried each route's pattern in turn, at some 150 instructions a route, so a
/// route low in the table (the gateways') paid a thousand and more per request for it.
struct Dispatch {
    table: Vec<Entry>,
    fallback: actix_web::Route,
}

impl ServiceFactory<ServiceRequest> for Dispatch {
    type Response = ServiceResponse;
    type Error = actix_web::Error;
    type Config = ();
    type Service = Dispatcher;
    type InitError = ();
    type Future = LocalBoxFuture<'static, Result<Dispatcher, ()>>;

    fn new_service(&self, _: ()) -> Self::Future {
        let routes: Vec<_> = self
            .table
            .iter()
            .map(|e| (e.method.clone(), e.path, e.route.new_service(())))
            .collect();
        let fallback = self.fallback.new_service(());
        Box::pin(async move {
            let mut table = Vec::with_capacity(routes.len());
            for (method, path, service) in routes {
                table.push((method, path, service.await?));
            }
            let fallback = fallback.await?;
            Ok(Dispatcher { table, fallback })
        })
    }
}

struct Dispatcher {
    table: Vec<(Method, &'static str, RouteService)>,
    fallback: RouteService,
}

impl Service<ServiceRequest> for Dispatcher {
    type Response = ServiceResponse;
    type Error = actix_web::Error;
    type Future = <RouteService as Service<ServiceRequest>>::Future;

    fn poll_ready(&self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&self, req: ServiceRequest) -> Self::Future {
        // The path as actix's router read it (percent-decoded where that is unambiguous).
        let path = req.match_info().unprocessed();
        let service = self
            .table
            .iter()
            .find(|(m, p, _)| *p == path && req.method() == m)
            .map_or(&self.fallback, |(_, _, service)| service);
        service.call(req)
    }
}

/// Count an error response, whichever route or layer answered it, and close its connection
/// after it: the route is the path of the app's route table that the request's path is (a
/// closed set, whatever the method), `other` for none; the code is the `ApiError`'s. Every route's errors pass here (the app wraps every
/// route in it), so none can forget to.
///
/// An error can come before the body was read (a stream's unknown product, a full budget, a
/// body over the limit); kept alive, such a connection would wait for the rest of a body its
/// client need never send, so it is closed instead.
pub fn end_on_error<B>(res: &mut ServiceResponse<B>, paths: &[&'static str]) {
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
        let path = req.match_info().unprocessed();
        let route = paths.iter().find(|p| **p == path).copied();
        let route = route.unwrap_or("other");
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

        fn $register(table: &mut Vec<Entry>) {
            $( table.push(Entry {
                method: method(stringify!($method)),
                path: $path,
                route: web::to($($handler)::+),
            }); )+
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
