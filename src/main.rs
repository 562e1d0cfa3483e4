//! Saltscope, the web app: thin pages over `saltscope-core`.
//!
//! Only built for wasm32 (Trunk). On the host the crate is an empty binary so
//! that `cargo test` at the root runs the core's tests and the engine
//! integration tests without compiling leptos.

#[cfg(target_arch = "wasm32")]
mod transport;
#[cfg(target_arch = "wasm32")]
mod ui;
#[cfg(target_arch = "wasm32")]
mod worker;

fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        console_error_panic_hook::set_once();
        ui::start();
    }
}
