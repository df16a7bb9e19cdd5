//! The `ptxc interp` argument syntax and JSON output.
//!
//! Where it sits: between the command line ([`crate::cli`]) and [`super::run_kernel`]:
//! it turns `--arg` texts into [`ArgValue`]s and the [`RunResult`] into JSON.
//!
//! Argument specs, one per kernel parameter, in order:
//!
//! - a scalar literal: `3`, `-1`, `1.5`, `inf`, `nan`; for a float parameter a hex
//!   literal is the raw bits (`0x3c00` is f16 1.0) and a decimal is rounded to the type;
//!   for a pointer parameter an address (`0` for null); a vector parameter takes its
//!   raw bits (lane 0 lowest, at most 128 bits);
//! - a buffer of typed elements: `f32[1, 2, 3.5]`, `i32[0;256]` (256 zeros; any
//!   element and count), `i8[]`;
//! - random bytes: `random:4096` (from `--seed`), optionally typed for the output:
//!   `random:4096:f32`.
//!
//! Output: `{"entry", "steps", "buffers": [...], "globals": [...]}`. Each buffer names
//! its parameter and shows its final contents as `values` decoded by its element type
//! (from the spec, else `--view TYPE`) or as `hex` bytes. Integers are signed decimal
//! numbers (strings beyond 64 bits), floats are numbers or the strings `"nan"`,
//! `"inf"`, `"-inf"`.

use serde_json::{json, Value};
use target_desc::tables::TargetTables;

use super::args::Rng;
use super::compile::{Kind, Ty};
use super::float::{self, FloatFormat};
use super::int::{mask, signed};
use super::{memory, ArgValue, RunResult};
use crate::mir::Function;

/// One parsed `--arg`: the value and, for buffers, the element type to show it as.
pub struct ParsedArg {
    pub value: ArgValue,
    pub view: Option<Ty>,
    pub view_name: Option<String>,
}

/// A parameter's type for [`parse_arg`] (`None` when the interpreter does not know it).
pub fn param_type(tables: &TargetTables, vt: target_desc::tables::VtId) -> Option<Ty> {
    Ty::from_vt(tables, vt)
}

/// A scalar or element type by name (`f32`, `i8`); vector types are not element types.
pub fn element_type(tables: &TargetTables, name: &str) -> Result<Ty, String> {
    let ty = tables.vt(name.trim()).and_then(|vt| Ty::from_vt(tables, vt)).ok_or_else(|| format!("unknown type `{name}`"))?;
    if ty.lanes != 1 || matches!(ty.kind, Kind::Pointer(_)) {
        return Err(format!("`{name}` is not an integer or float element type"));
    }
    Ok(ty)
}

/// Parses the `--arg` for parameter `index` (of type `param`); `seed` feeds `random:`.
pub fn parse_arg(text: &str, param: Option<Ty>, tables: &TargetTables, seed: u64, index: usize) -> Result<ParsedArg, String> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("random:") {
        let (count, view) = match rest.split_once(':') {
            Some((count, ty)) => (count, Some(ty)),
            None => (rest, None),
        };
        let count: usize = count.trim().parse().map_err(|_| format!("expected a byte count in `{text}`"))?;
        let mut rng = Rng::new(seed.wrapping_add(index as u64 * 0x1000_0000_0001));
        let view_ty = view.map(|v| element_type(tables, v)).transpose()?;
        return Ok(ParsedArg { value: ArgValue::Buffer(rng.bytes(count)), view: view_ty, view_name: view.map(str::to_string) });
    }
    if let Some((ty_name, rest)) = text.split_once('[') {
        let body = rest.strip_suffix(']').ok_or_else(|| format!("expected `]` at the end of `{text}`"))?;
        let ty = element_type(tables, ty_name)?;
        let elements: Vec<u128> = if let Some((value, count)) = body.split_once(';') {
            let count: usize = count.trim().parse().map_err(|_| format!("expected a count after `;` in `{text}`"))?;
            vec![parse_scalar(value, ty)?; count]
        } else if body.trim().is_empty() {
            Vec::new()
        } else {
            body.split(',').map(|v| parse_scalar(v, ty)).collect::<Result<_, _>>()?
        };
        let mut bytes = vec![0u8; elements.len() * memory::stored_size(ty) as usize];
        let size = memory::stored_size(ty) as usize;
        for (k, e) in elements.iter().enumerate() {
            memory::encode_lanes(&[*e], ty, &mut bytes[k * size..(k + 1) * size]);
        }
        return Ok(ParsedArg { value: ArgValue::Buffer(bytes), view: Some(ty), view_name: Some(ty_name.trim().to_string()) });
    }
    let Some(param) = param else { return Err(format!("parameter {index} has a type the interpreter does not know")) };
    let value = if param.lanes > 1 || matches!(param.kind, Kind::Pointer(_)) {
        // Vectors and pointers take raw bits.
        parse_integer(text).map(|v| v as u128 & mask(param.total_bits().min(128)))?
    } else {
        parse_scalar(text, param)?
    };
    Ok(ParsedArg { value: ArgValue::Scalar(value), view: None, view_name: None })
}

fn parse_integer(text: &str) -> Result<i128, String> {
    let t = text.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    let magnitude = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        u128::from_str_radix(hex, 16).map_err(|_| format!("malformed hex literal `{t}`"))?
    } else {
        digits.parse::<u128>().map_err(|_| format!("malformed integer `{t}`"))?
    };
    Ok(if negative { (magnitude as i128).wrapping_neg() } else { magnitude as i128 })
}

/// One scalar of type `ty`: integers by value (wrapped to the width), floats by value
/// (rounded) or, written in hex, by their bits.
pub fn parse_scalar(text: &str, ty: Ty) -> Result<u128, String> {
    let t = text.trim();
    match ty.kind {
        Kind::Float(format) => {
            if t.starts_with("0x") || t.starts_with("0X") {
                return parse_integer(t).map(|v| v as u128 & mask(format.bits()));
            }
            let value = match t {
                "inf" | "+inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                "nan" => f64::NAN,
                _ => t.parse::<f64>().map_err(|_| format!("malformed float `{t}`"))?,
            };
            Ok(float::from_f64(format, value))
        }
        _ => parse_integer(t).map(|v| v as u128 & mask(ty.bits)),
    }
}

/// A buffer's bytes as JSON values of type `ty`.
pub fn decode_values(bytes: &[u8], ty: Ty) -> Vec<Value> {
    let size = memory::stored_size(ty) as usize;
    bytes
        .chunks_exact(size.max(1))
        .map(|chunk| {
            let mut lane = [0u128; 1];
            memory::decode_lanes(chunk, ty, &mut lane);
            element_json(lane[0], ty)
        })
        .collect()
}

fn element_json(bits: u128, ty: Ty) -> Value {
    match ty.kind {
        Kind::Float(FloatFormat::F128) => json!(format!("{bits:#034x}")),
        Kind::Float(format) => {
            let x = float::to_f64(format, bits);
            if x.is_nan() {
                json!("nan")
            } else if x.is_infinite() {
                json!(if x > 0.0 { "inf" } else { "-inf" })
            } else {
                json!(x)
            }
        }
        _ => {
            let v = if ty.bits == 1 { bits as i128 } else { signed(bits, ty.bits) };
            match i64::try_from(v) {
                Ok(small) => json!(small),
                Err(_) => json!(v.to_string()),
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The JSON report of a run: buffers by parameter, global-space globals, steps.
pub fn result_json(
    function: &Function,
    tables: &TargetTables,
    module_globals: &[crate::mir::Global],
    args: &[ParsedArg],
    view: Option<Ty>,
    view_name: Option<&str>,
    result: &RunResult,
) -> Value {
    let mut buffers = Vec::new();
    let mut contents = result.buffers.iter();
    for (k, arg) in args.iter().enumerate() {
        if !matches!(arg.value, ArgValue::Buffer(_)) {
            continue;
        }
        let Some(bytes) = contents.next() else { break };
        let name = function.params.get(k).map_or("?", |p| p.name.as_str());
        let (ty, ty_name) = match (arg.view, view) {
            (Some(t), _) => (Some(t), arg.view_name.as_deref()),
            (None, Some(t)) => (Some(t), view_name),
            _ => (None, None),
        };
        buffers.push(match (ty, ty_name) {
            (Some(t), Some(n)) => json!({ "param": name, "index": k, "type": n, "values": decode_values(bytes, t) }),
            _ => json!({ "param": name, "index": k, "hex": hex(bytes) }),
        });
    }
    let globals: Vec<Value> = result
        .globals
        .iter()
        .map(|(name, bytes)| {
            let g = module_globals.iter().find(|g| &g.name == name);
            let ty = g.and_then(|g| Ty::from_vt(tables, g.ty));
            let type_name = g.and_then(|g| tables.type_info(g.ty)).map_or("?", |t| t.name);
            match ty {
                Some(t) => {
                    let element = Ty { lanes: 1, ..t };
                    json!({ "name": name, "type": type_name, "values": decode_values(bytes, element) })
                }
                None => json!({ "name": name, "hex": hex(bytes) }),
            }
        })
        .collect();
    json!({ "entry": function.name, "steps": result.steps, "buffers": buffers, "globals": globals })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(name: &str) -> Ty {
        element_type(tables::nvptx(), name).unwrap()
    }

    #[test]
    fn scalars_parse_by_type() {
        assert_eq!(parse_scalar("3", ty("i32")), Ok(3));
        assert_eq!(parse_scalar("-1", ty("i8")), Ok(0xFF));
        assert_eq!(parse_scalar("1.5", ty("f32")), Ok(u128::from(1.5f32.to_bits())));
        assert_eq!(parse_scalar("0x3c00", ty("f16")), Ok(0x3C00));
        assert_eq!(parse_scalar("1", ty("f16")), Ok(0x3C00));
        assert!(parse_scalar("1.5", ty("i32")).is_err());
    }

    #[test]
    fn buffers_parse_with_repeats_and_lists() {
        let t = tables::nvptx();
        let parsed = parse_arg("i32[7;3]", None, t, 0, 0).unwrap();
        assert_eq!(parsed.value, ArgValue::Buffer(vec![7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0]));
        let parsed = parse_arg("f32[1, 2.5]", None, t, 0, 0).unwrap();
        let mut expected = 1.0f32.to_le_bytes().to_vec();
        expected.extend_from_slice(&2.5f32.to_le_bytes());
        assert_eq!(parsed.value, ArgValue::Buffer(expected));
        let random = parse_arg("random:64", None, t, 9, 1).unwrap();
        assert!(matches!(&random.value, ArgValue::Buffer(b) if b.len() == 64));
        assert_eq!(parse_arg("random:64", None, t, 9, 1).unwrap().value, random.value, "seeded");
        assert!(parse_arg("q32[1]", None, t, 0, 0).is_err());
    }

    #[test]
    fn values_decode_for_output() {
        let bytes: Vec<u8> = [f32::NAN, -0.0, 2.5].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(decode_values(&bytes, ty("f32")), vec![json!("nan"), json!(-0.0), json!(2.5)]);
        assert_eq!(decode_values(&[0xFF, 0x7F], ty("i8")), vec![json!(-1), json!(127)]);
    }
}
