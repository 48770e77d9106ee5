//! Type unification as Terraform does it (cty's `convert.Unify`): the one type that values of
//! several types all convert to, for conditionals, `tolist`/`toset`/`tomap` of mixed elements,
//! `coalesce` and the set functions.

use std::collections::BTreeMap;

use crate::value::{Type, Value};

/// The common type of `types`, or `None` when there is none:
///
/// - equal types are themselves, and `dynamic` (a null or an unknown) gives way to the others;
/// - primitives of different kinds unify to `string` when one of them is a string (numbers and
///   bools convert to strings); a number and a bool alone do not unify;
/// - lists, sets and maps unify their element types; tuples of one length and objects of one
///   set of attributes unify element by element; other tuples unify to a list, other objects
///   to a map, of all their element types.
pub fn unify(types: &[Type]) -> Option<Type> {
    let known: Vec<&Type> = types.iter().filter(|t| **t != Type::Dynamic).collect();
    let Some(first) = known.first() else {
        return Some(Type::Dynamic);
    };
    if known.iter().all(|t| t == first) {
        return Some((*first).clone());
    }
    if known.iter().all(|t| is_primitive(t)) {
        return known
            .iter()
            .any(|t| **t == Type::String)
            .then_some(Type::String);
    }
    let elements = |pick: fn(&Type) -> Option<Vec<Type>>| -> Option<Vec<Type>> {
        let mut all = Vec::new();
        for t in &known {
            all.extend(pick(t)?);
        }
        Some(all)
    };
    match first {
        Type::List(_) => unify(&elements(|t| match t {
            Type::List(e) => Some(vec![(**e).clone()]),
            Type::Tuple(items) => Some(items.to_vec()),
            _ => None,
        })?)
        .map(|e| Type::List(Box::new(e))),
        Type::Set(_) => unify(&elements(|t| match t {
            Type::Set(e) => Some(vec![(**e).clone()]),
            Type::Tuple(items) => Some(items.to_vec()),
            _ => None,
        })?)
        .map(|e| Type::Set(Box::new(e))),
        Type::Map(_) | Type::Object(_) => maps(&known),
        Type::Tuple(_) => match known.iter().find(|t| !matches!(t, Type::Tuple(_))) {
            // A tuple meets a list or a set as that collection.
            Some(other @ (Type::List(_) | Type::Set(_))) => {
                let mut reordered: Vec<Type> = vec![(*other).clone()];
                reordered.extend(known.iter().map(|t| (*t).clone()));
                unify(&reordered)
            }
            Some(_) => None,
            None => tuples(&known),
        },
        _ => None,
    }
}

fn is_primitive(t: &Type) -> bool {
    matches!(t, Type::Bool | Type::Number | Type::String)
}

fn tuples(known: &[&Type]) -> Option<Type> {
    let shapes: Vec<&Vec<Type>> = known
        .iter()
        .map(|t| match t {
            Type::Tuple(items) => Some(items.as_ref()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let len = shapes[0].len();
    if shapes.iter().all(|s| s.len() == len) {
        let items = (0..len)
            .map(|i| unify(&shapes.iter().map(|s| s[i].clone()).collect::<Vec<_>>()))
            .collect::<Option<Vec<_>>>()?;
        return Some(Type::Tuple(Box::new(items)));
    }
    let all: Vec<Type> = shapes.iter().flat_map(|s| s.iter().cloned()).collect();
    unify(&all).map(|e| Type::List(Box::new(e)))
}

fn maps(known: &[&Type]) -> Option<Type> {
    let objects: Option<Vec<&BTreeMap<String, Type>>> = known
        .iter()
        .map(|t| match t {
            Type::Object(attrs) => Some(attrs.as_ref()),
            _ => None,
        })
        .collect();
    if let Some(objects) = objects
        && objects.iter().all(|o| o.keys().eq(objects[0].keys()))
    {
        let attrs = objects[0]
            .keys()
            .map(|k| {
                let types: Vec<Type> = objects.iter().map(|o| o[k].clone()).collect();
                unify(&types).map(|t| (k.clone(), t))
            })
            .collect::<Option<BTreeMap<_, _>>>()?;
        return Some(Type::Object(Box::new(attrs)));
    }
    let mut all = Vec::new();
    for t in known {
        match t {
            Type::Map(e) => all.push((**e).clone()),
            Type::Object(attrs) => all.extend(attrs.values().cloned()),
            _ => return None,
        }
    }
    unify(&all).map(|e| Type::Map(Box::new(e)))
}

/// [`unify`] as HCL's conditionals do it (cty's unsafe unification): a list and a set also
/// meet, as a list.
pub fn unify_unsafe(types: &[Type]) -> Option<Type> {
    unify(types).or_else(|| {
        let as_lists: Vec<Type> = types
            .iter()
            .map(|t| match t {
                Type::Set(e) => Type::List(e.clone()),
                t => t.clone(),
            })
            .collect();
        unify(&as_lists)
    })
}

/// The common type of the values' types.
pub fn unify_values<'a>(values: impl IntoIterator<Item = &'a Value>) -> Option<Type> {
    let types: Vec<Type> = values.into_iter().map(Value::ty).collect();
    unify(&types)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_unify_to_string_but_number_and_bool_do_not() {
        assert_eq!(unify(&[Type::Number, Type::String]), Some(Type::String));
        assert_eq!(unify(&[Type::Bool, Type::String]), Some(Type::String));
        assert_eq!(unify(&[Type::Number, Type::Bool]), None);
        assert_eq!(unify(&[Type::Dynamic, Type::Number]), Some(Type::Number));
        let list = |t: Type| Type::List(Box::new(t));
        assert_eq!(
            unify(&[list(Type::Number), list(Type::String)]),
            Some(list(Type::String))
        );
    }
}
