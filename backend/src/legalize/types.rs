//! Type actions: what the legalizer does with a value type an SM has no register for.
//!
//! The legal type set is the description's (`register-classes.yaml`, SM-gated members);
//! how an illegal type is made legal is generic, as in LLVM's
//! `TargetLoweringBase::getTypeConversion` (reference: cicc-type-legalization.txt,
//! "The Four Legalization Actions"):
//!
//! - an integer narrower than some register integer is promoted to the next wider one
//!   (i8 -> i16), a wider one is expanded into two halves (i128 -> 2 x i64);
//! - a float with no register is softened to the integer of its width (bf16 -> i16
//!   before sm_80), and its arithmetic is done in a wider float;
//! - a vector is widened to the next power-of-two lane count when that vector is a
//!   register type (v3i8 -> v4i8, v1f16 -> v2f16), split in two halves when it has an
//!   even lane count (v8f16 -> 2 x v4f16), and scalarized otherwise or when the halves
//!   would be single elements (v2f32 -> 2 x f32).

use target_desc::tables::{SmTables, TargetTables, TypeKind, VtId};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TypeAction {
    Legal,
    /// Integer widened to this register type.
    Promote(VtId),
    /// Integer split into (low, high) halves of this type.
    Expand(VtId),
    /// Float carried as the bits of this integer type.
    Soften(VtId),
    /// Vector split into two halves of this type.
    Split(VtId),
    /// Vector split into its elements, of this type.
    Scalarize(VtId),
    /// Vector widened to this vector type; the extra lanes are undefined.
    Widen(VtId),
}

impl TypeAction {
    pub fn name(self) -> &'static str {
        match self {
            TypeAction::Legal => "Legal",
            TypeAction::Promote(_) => "Promote",
            TypeAction::Expand(_) => "Expand",
            TypeAction::Soften(_) => "Soften",
            TypeAction::Split(_) => "Split",
            TypeAction::Scalarize(_) => "Scalarize",
            TypeAction::Widen(_) => "Widen",
        }
    }

    /// The types of the values that replace one value of the illegal type.
    pub fn part_types(self, tables: &TargetTables, ty: VtId) -> Vec<VtId> {
        match self {
            TypeAction::Legal => vec![ty],
            TypeAction::Promote(t) | TypeAction::Soften(t) | TypeAction::Widen(t) => vec![t],
            TypeAction::Expand(t) | TypeAction::Split(t) => vec![t, t],
            TypeAction::Scalarize(e) => vec![e; lanes(tables, ty) as usize],
        }
    }
}

pub fn lanes(tables: &TargetTables, ty: VtId) -> u16 {
    tables.type_info(ty).map(|t| t.lanes).unwrap_or(1)
}

pub fn bits(tables: &TargetTables, ty: VtId) -> u16 {
    tables.type_info(ty).map(|t| t.bits).unwrap_or(0)
}

pub fn kind(tables: &TargetTables, ty: VtId) -> TypeKind {
    tables.type_info(ty).map(|t| t.kind).unwrap_or(TypeKind::Int)
}

pub fn element(tables: &TargetTables, ty: VtId) -> VtId {
    VtId(tables.type_info(ty).map(|t| t.elem).unwrap_or(ty.0))
}

pub fn is_float(tables: &TargetTables, ty: VtId) -> bool {
    kind(tables, ty) == TypeKind::Float
}

pub fn is_vector(tables: &TargetTables, ty: VtId) -> bool {
    kind(tables, ty) == TypeKind::Vector
}

/// A float that is the top half of an f32 (16 bits with 7 stored mantissa bits, as the
/// description's `mantissa` field says of bf16): it widens to f32 by a shift and narrows
/// by rounding the bits, and the SMs that lack its conversions go through f32.
pub fn is_f32_top_half(tables: &TargetTables, ty: VtId) -> bool {
    tables.type_info(ty).is_some_and(|t| t.kind == TypeKind::Float && t.bits == 16 && t.mantissa == 7)
}

/// The integer type of exactly `bits` bits, if the description defines one.
pub fn int_type(tables: &TargetTables, bits: u16) -> Option<VtId> {
    tables.types.iter().find(|t| t.kind == TypeKind::Int && t.bits == bits).map(|t| VtId(t.id))
}

/// The vector of `lanes` elements of `elem`, if the description defines one.
pub fn vector_type(tables: &TargetTables, elem: VtId, lanes: u16) -> Option<VtId> {
    tables.types.iter().find(|t| t.kind == TypeKind::Vector && t.elem == elem.0 && t.lanes == lanes).map(|t| VtId(t.id))
}

/// The float type of `bits` bits named `name` (`f32`), for promotion targets.
pub fn named(tables: &TargetTables, name: &str) -> Option<VtId> {
    tables.vt(name)
}

pub fn type_action(tables: &TargetTables, sm: &SmTables, ty: VtId) -> Result<TypeAction, String> {
    if sm.type_supported(ty) {
        return Ok(TypeAction::Legal);
    }
    let Some(info) = tables.type_info(ty) else {
        return Err(format!("unknown type id {}", ty.0));
    };
    let supported = |t: &&target_desc::tables::TypeInfo| sm.type_supported(VtId(t.id));
    match info.kind {
        TypeKind::Int => {
            let wider = tables.types.iter().filter(supported).filter(|t| t.kind == TypeKind::Int && t.bits > info.bits).min_by_key(|t| t.bits);
            if let Some(w) = wider {
                return Ok(TypeAction::Promote(VtId(w.id)));
            }
            match int_type(tables, info.bits / 2) {
                Some(half) if info.bits % 2 == 0 => Ok(TypeAction::Expand(half)),
                _ => Err(format!("{} has no wider register integer and no half type to expand into", info.name)),
            }
        }
        TypeKind::Float => match int_type(tables, info.bits) {
            Some(i) => Ok(TypeAction::Soften(i)),
            None => Err(format!("{} has no integer type of its width to soften into", info.name)),
        },
        TypeKind::Pointer => Err(format!("pointer type {} has no register class", info.name)),
        TypeKind::Vector => {
            let elem = VtId(info.elem);
            let lanes = info.lanes;
            if !lanes.is_power_of_two() || lanes == 1 {
                let wide = lanes.next_power_of_two().max(2);
                if let Some(w) = vector_type(tables, elem, wide) {
                    if sm.type_supported(w) {
                        return Ok(TypeAction::Widen(w));
                    }
                }
            }
            if lanes % 2 == 0 && lanes > 2 {
                if let Some(half) = vector_type(tables, elem, lanes / 2) {
                    return Ok(TypeAction::Split(half));
                }
            }
            Ok(TypeAction::Scalarize(elem))
        }
    }
}
