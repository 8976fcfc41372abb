//! Checks shared by the unit tests of the parsers.

use std::fmt::{Debug, Display};
use std::str::FromStr;

/// Parses `input` as `T`, expecting a refusal whose message quotes the
/// input and says `rule`; returns the error for further checks.
pub(crate) fn assert_refused<T: FromStr + Debug>(input: &str, rule: &str) -> T::Err
where
    T::Err: Display,
{
    let err = input.parse::<T>().expect_err(input);
    let text = err.to_string();
    assert!(text.contains(&format!("{input:?}")), "{text}");
    assert!(text.contains(rule), "{rule:?} not in: {text}");
    err
}
