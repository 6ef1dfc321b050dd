//! Values crossing between the host and the program: arguments read from JS, storage-codec values decoded
//! for it, and the errors and settled promises it is given.

use boa_engine::{
    Context, JsError, JsNativeError, JsObject, JsResult, JsString, JsValue, js_string,
    object::builtins::{JsArray, JsPromise, JsUint8Array},
};
use serde_json::value::RawValue;

pub(super) fn arg_string(args: &[JsValue], index: usize) -> Option<String> {
    args.get(index)
        .and_then(JsValue::as_string)
        .map(|s| s.to_std_string_lossy())
}

pub(super) fn arg_raw(args: &[JsValue], index: usize) -> Option<Box<RawValue>> {
    arg_string(args, index).and_then(|text| RawValue::from_string(text).ok())
}

/// Decodes a storage-codec value for the program: binary envelopes become `Uint8Array` (or `ArrayBuffer`),
/// bigint envelopes `BigInt`; `None` is `undefined`.
pub(super) fn raw_to_js(value: Option<Box<RawValue>>, context: &mut Context) -> JsResult<JsValue> {
    let Some(raw) = value else {
        return Ok(JsValue::undefined());
    };
    let value: serde_json::Value = serde_json::from_str(raw.get()).map_err(|e| {
        JsNativeError::typ().with_message(format!("unreadable value from the host: {e}"))
    })?;
    json_to_js(&value, context)
}

fn json_to_js(value: &serde_json::Value, context: &mut Context) -> JsResult<JsValue> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => JsValue::null(),
        Value::Bool(b) => JsValue::from(*b),
        Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => JsValue::from(i),
            None => JsValue::from(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => JsValue::from(JsString::from(s.as_str())),
        Value::Array(items) => {
            let values = items
                .iter()
                .map(|item| json_to_js(item, context))
                .collect::<JsResult<Vec<_>>>()?;
            JsArray::from_iter(values, context).into()
        }
        Value::Object(map) => {
            if let (Some(Value::String(kind)), Some(Value::String(data))) =
                (map.get(crate::codec::BINARY_ENVELOPE), map.get("data"))
            {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data.as_bytes())
                    .map_err(|e| {
                        JsNativeError::typ().with_message(format!("invalid binary envelope: {e}"))
                    })?;
                let array = JsUint8Array::from_iter(bytes, context)?;
                return if kind == "ArrayBuffer" {
                    array.get(js_string!("buffer"), context)
                } else {
                    Ok(array.into())
                };
            }
            if let Some(Value::String(digits)) = map.get(crate::codec::BIGINT_ENVELOPE)
                && let Some(big) = boa_engine::JsBigInt::from_string(digits)
            {
                return Ok(big.into());
            }
            let object = JsObject::with_object_proto(context.intrinsics());
            for (key, item) in map {
                let item = json_to_js(item, context)?;
                object.create_data_property_or_throw(
                    JsString::from(key.as_str()),
                    item,
                    context,
                )?;
            }
            object.into()
        }
    })
}

pub(super) fn connector_error(message: String) -> JsError {
    JsNativeError::error().with_message(message).into()
}

/// A promise already settled with `value` (rejected with the error), as an async method would return.
pub(super) fn settled(value: JsResult<JsValue>, context: &mut Context) -> JsResult<JsValue> {
    let promise = match value {
        Ok(value) => JsPromise::resolve(value, context)?,
        Err(error) => JsPromise::reject(error, context)?,
    };
    Ok(promise.into())
}
