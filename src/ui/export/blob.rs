//! The export's file: pages appended to a Blob, which owns its object URL
//! and revokes it when the file goes (the next export starts, or the panel
//! is gone).

use saltscope_core::export::ExportSink;
use web_sys::{Blob, BlobPropertyBag, Url};

#[derive(Default)]
pub struct BlobFile {
    blob: Option<Blob>,
    url: Option<String>,
}

impl BlobFile {
    /// The URL to download the file from, made once.
    pub fn url(&mut self) -> String {
        if self.blob.is_none() {
            self.append(&[]);
        }
        if self.url.is_none() {
            self.url = self
                .blob
                .as_ref()
                .and_then(|b| Url::create_object_url_with_blob(b).ok());
        }
        self.url.clone().unwrap_or_default()
    }
}

impl ExportSink for BlobFile {
    /// The file so far and one more page, as a new Blob of two parts: the
    /// bytes leave wasm and the JS heap at once, into the browser's blob
    /// store.
    fn append(&mut self, bytes: &[u8]) {
        let parts = js_sys::Array::new();
        if let Some(previous) = &self.blob {
            parts.push(previous);
        }
        let options = BlobPropertyBag::new();
        options.set_type("text/csv;charset=utf-8");
        // A view of the bytes in wasm memory, not a copy on the JS heap: the
        // Blob copies them at once, so a copy per page would only be garbage
        // (15 MB/s of it at 75k rows/s, which peaked the tab's heap at 75 MB).
        // SAFETY: nothing allocates in wasm between the view and Blob::new,
        // so the memory it views can neither move nor change.
        let view = unsafe { js_sys::Uint8Array::view(bytes) };
        parts.push(&view);
        let made = Blob::new_with_u8_array_sequence_and_options(&parts, &options).ok();
        drop(view);
        self.blob = made;
    }
}

impl Drop for BlobFile {
    fn drop(&mut self) {
        if let Some(url) = self.url.take() {
            let _ = Url::revoke_object_url(&url);
        }
    }
}
