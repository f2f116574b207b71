//! Stan's message for data that do not fit the model, said in words when a
//! data field is missing from the JSON.
//!
//! Stan's JSON reader reports a field the data lack in one of two ways: a
//! scalar as "variable does not exist; …; variable name=N; base type=int",
//! anything with dimensions as "mismatch in number dimensions declared and
//! found in context; …; variable name=y; dims declared=(3); dims found=()"
//! (it reads a missing field as one without dimensions). The second also
//! comes from a field that is present as a scalar where the model declares
//! an array, so the data's keys decide which it is.

/// A field the model reads, as Stan's message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UnreadField {
    /// The field's name.
    pub name: String,
    /// How the model declares it: `with dimensions (3)` or `as a scalar int`.
    pub declared: String,
}

/// The text of `message` after `key` up to the next `;` (or the end), trimmed.
fn value_after<'a>(message: &'a str, key: &str) -> Option<&'a str> {
    let start = message.find(key)? + key.len();
    let rest = &message[start..];
    Some(rest[..rest.find(';').unwrap_or(rest.len())].trim())
}

/// A dimension list `(…)` at the start of `text`, as Stan prints it.
fn dimension_list(text: &str) -> Option<&str> {
    let end = text.find(')')?;
    text.starts_with('(').then(|| &text[..=end])
}

/// The field Stan's data-construction `message` says it found without
/// dimensions or not at all; `None` for every other message (wrong sizes,
/// non-integer values, constraint violations, …).
pub(super) fn unread_field(message: &str) -> Option<UnreadField> {
    let name = value_after(message, "variable name=")?;
    if name.is_empty() {
        return None;
    }
    let declared = if message.contains("mismatch in number dimensions declared and found") {
        let found = dimension_list(value_after(message, "dims found=")?)?;
        if found != "()" {
            return None;
        }
        let declared = dimension_list(value_after(message, "dims declared=")?)?;
        format!("with dimensions {declared}")
    } else if message.contains("variable does not exist") {
        let base = value_after(message, "base type=")?;
        let base = base.split_whitespace().next().unwrap_or("");
        let base = if base == "double" { "real" } else { base };
        format!("as a scalar {base}")
    } else {
        return None;
    };
    Some(UnreadField {
        name: name.to_string(),
        declared,
    })
}

/// The words for Stan's data-construction `message` when the field it names
/// is not a key of `data` (the JSON text, read from `file_name`): "data
/// field `y` is missing from FILE (the model declares it with dimensions
/// (3))". `None` when the message names no such field or the data have it
/// (then Stan's own message says what is wrong), or the data are not a
/// JSON object.
pub(super) fn missing_field_message(message: &str, data: &str, file_name: &str) -> Option<String> {
    let field = unread_field(message)?;
    let value: serde_json::Value = serde_json::from_str(data).ok()?;
    let present = value.as_object()?.contains_key(&field.name);
    (!present).then(|| {
        format!(
            "data field `{}` is missing from {file_name} (the model declares it {})",
            field.name, field.declared
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Messages of a model compiled by stan/build-model.py (Stan 2.32, the
    // httpstan 4.13 wheel) with data { int<lower=0> N; vector[N] y;
    // array[N] int k; matrix[2, N] m; }, as bs_model_construct returned them.
    const MISSING_Y: &str = "error constructing the model: Exception: mismatch in number \
        dimensions declared and found in context; processing stage=data initialization; \
        variable name=y; dims declared=(3); dims found=() (in '/tmp/missing.stan', line 3, \
        column 2 to column 14)";
    const MISSING_M: &str = "error constructing the model: Exception: mismatch in number \
        dimensions declared and found in context; processing stage=data initialization; \
        variable name=m; dims declared=(2,3); dims found=() (in '/tmp/missing.stan', line 5, \
        column 2 to column 17)";
    const MISSING_N: &str = "error constructing the model: Exception: variable does not exist; \
        processing stage=data initialization; variable name=N; base type=int (in \
        '/tmp/missing.stan', line 2, column 2 to column 17)";
    const SHORT_Y: &str = "error constructing the model: Exception: mismatch in dimension \
        declared and found in context; processing stage=data initialization; variable name=y; \
        position=0; dims declared=(3); dims found=(2) (in '/tmp/missing.stan', line 3, column 2 \
        to column 14)";
    const REAL_N: &str = "error constructing the model: Exception: int variable contained \
        non-int values; processing stage=data initialization; variable name=N; base type=int \
        (in '/tmp/missing.stan', line 2, column 2 to column 17)";

    #[test]
    fn stan_messages_are_parsed() {
        let field = |name: &str, declared: &str| {
            Some(UnreadField {
                name: name.into(),
                declared: declared.into(),
            })
        };
        assert_eq!(unread_field(MISSING_Y), field("y", "with dimensions (3)"));
        assert_eq!(unread_field(MISSING_M), field("m", "with dimensions (2,3)"));
        assert_eq!(unread_field(MISSING_N), field("N", "as a scalar int"));
        assert_eq!(
            unread_field(
                "variable does not exist; processing stage=data initialization; variable name=sigma; base type=double"
            ),
            field("sigma", "as a scalar real")
        );
        assert_eq!(unread_field(SHORT_Y), None);
        assert_eq!(unread_field(REAL_N), None);
        assert_eq!(
            unread_field("variable does not exist; variable name=N"),
            None
        );
        assert_eq!(unread_field("something else entirely"), None);
    }

    #[test]
    fn a_field_absent_from_the_json_is_called_missing() {
        let data = r#"{"N": 3, "k": [1, 2, 3], "m": [[1, 2, 3], [4, 5, 6]]}"#;
        assert_eq!(
            missing_field_message(MISSING_Y, data, "data.json").as_deref(),
            Some(
                "data field `y` is missing from data.json (the model declares it with dimensions (3))"
            )
        );
        let data = r#"{"y": [1, 2, 3]}"#;
        assert_eq!(
            missing_field_message(MISSING_N, data, "d.json").as_deref(),
            Some("data field `N` is missing from d.json (the model declares it as a scalar int)")
        );
    }

    #[test]
    fn a_present_field_with_the_wrong_dimensions_is_not_called_missing() {
        // The same message as MISSING_Y: Stan reads `"y": 2.5` as a field
        // without dimensions.
        let data = r#"{"N": 3, "y": 2.5, "k": [1, 2, 3], "m": [[1, 2, 3], [4, 5, 6]]}"#;
        assert_eq!(missing_field_message(MISSING_Y, data, "data.json"), None);
        let data = r#"{"N": 3, "y": [1, 2], "k": [1, 2, 3], "m": [[1, 2, 3], [4, 5, 6]]}"#;
        assert_eq!(missing_field_message(SHORT_Y, data, "data.json"), None);
        // Not JSON, or not an object: no claim either.
        assert_eq!(
            missing_field_message(MISSING_Y, "[1, 2]", "data.json"),
            None
        );
        assert_eq!(missing_field_message(MISSING_Y, "{", "data.json"), None);
    }
}
