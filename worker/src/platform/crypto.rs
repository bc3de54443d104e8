//! The platform's WebCrypto (`crypto.subtle`): SHA-256 digests (owner ids, stored token hashes),
//! HMAC-SHA256 signatures (the webhook), and RS256 verification against a JSON Web Key (Cloudflare
//! Access tokens). Nothing cryptographic is implemented here; the runtime does it.

use worker::js_sys::{self, Array, Object, Reflect, Uint8Array};
use worker::send::SendFuture;
use worker::wasm_bindgen::prelude::*;
use worker::wasm_bindgen_futures::JsFuture;

use super::error::{AppError, AppResult};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["crypto", "subtle"], js_name = digest, catch)]
    fn subtle_digest(algorithm: &str, data: &[u8]) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["crypto", "subtle"], js_name = importKey, catch)]
    fn subtle_import_key(
        format: &str,
        key: &JsValue,
        algorithm: &JsValue,
        extractable: bool,
        usages: &Array,
    ) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["crypto", "subtle"], js_name = sign, catch)]
    fn subtle_sign(algorithm: &str, key: &JsValue, data: &[u8])
    -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["crypto", "subtle"], js_name = verify, catch)]
    fn subtle_verify(
        algorithm: &str,
        key: &JsValue,
        signature: &[u8],
        data: &[u8],
    ) -> Result<js_sys::Promise, JsValue>;
}

/// The RSASSA-PKCS1-v1_5 algorithm of RS256.
const RS256: &str = "RSASSA-PKCS1-v1_5";

/// A key imported into WebCrypto (opaque; usable only for what it was imported for).
#[derive(Clone)]
pub struct CryptoKey(JsValue);

async fn settle(promise: Result<js_sys::Promise, JsValue>) -> AppResult<JsValue> {
    let promise = promise.map_err(|e| AppError::internal(&format_args!("webcrypto: {e:?}")))?;
    SendFuture::new(JsFuture::from(promise))
        .await
        .map_err(|e| AppError::internal(&format_args!("webcrypto: {e:?}")))
}

fn bytes(value: JsValue) -> Vec<u8> {
    Uint8Array::new(&value).to_vec()
}

/// SHA-256 of `data`.
pub async fn sha256(data: &[u8]) -> AppResult<Vec<u8>> {
    Ok(bytes(settle(subtle_digest("SHA-256", data)).await?))
}

/// HMAC-SHA256 of `data` with `secret`.
pub async fn hmac_sha256(secret: &[u8], data: &[u8]) -> AppResult<Vec<u8>> {
    let algorithm = Object::new();
    set(&algorithm, "name", &"HMAC".into());
    set(&algorithm, "hash", &"SHA-256".into());
    let raw = Uint8Array::from(secret);
    let usages = Array::of1(&"sign".into());
    let key = settle(subtle_import_key("raw", &raw, &algorithm, false, &usages)).await?;
    Ok(bytes(settle(subtle_sign("HMAC", &key, data)).await?))
}

/// Imports an RSA public key given as a JWK (the parsed JSON object of a JWKS entry) for RS256
/// verification.
pub async fn import_rs256_jwk(jwk: &JsValue) -> AppResult<CryptoKey> {
    let algorithm = Object::new();
    set(&algorithm, "name", &RS256.into());
    set(&algorithm, "hash", &"SHA-256".into());
    let usages = Array::of1(&"verify".into());
    let key = settle(subtle_import_key("jwk", jwk, &algorithm, false, &usages)).await?;
    Ok(CryptoKey(key))
}

/// Whether `signature` is `key`'s RS256 signature of `data`.
pub async fn verify_rs256(key: &CryptoKey, signature: &[u8], data: &[u8]) -> AppResult<bool> {
    let verified = settle(subtle_verify(RS256, &key.0, signature, data)).await?;
    Ok(verified.as_bool().unwrap_or(false))
}

fn set(object: &Object, key: &str, value: &JsValue) {
    // Setting a property on a fresh plain object cannot fail.
    let _ = Reflect::set(object, &key.into(), value);
}
