//! Hand-written sources that replace a user kernel's generated passes (the
//! escape hatch), by language and entry point.

use std::collections::HashMap;

use kiln_core::{Error, Language, Program, Result, Source};

/// The hand-written sources of one kernel.
#[derive(Clone, Default)]
pub(super) struct Overrides(HashMap<(Language, String), Source>);

impl Overrides {
    /// These sources and `source` for `entry` in `language`; `Err` naming
    /// the kernel and its entry points when `entry` is not one of `entries`.
    pub(super) fn with(
        &self,
        kernel: &str,
        entries: &[String],
        language: Language,
        entry: &str,
        source: Source,
    ) -> Result<Self> {
        if !entries.iter().any(|e| e == entry) {
            return Err(Error::invalid(
                format!("user kernel `{kernel}`"),
                format!("has no entry point `{entry}` in {language} (its entry points: {})", entries.join(", ")),
            ));
        }
        Ok(self.with_entry(language, entry, source))
    }

    /// `self` with `source` for `entry` in `language`, an entry point the
    /// caller knows its kernel has.
    pub(super) fn with_entry(&self, language: Language, entry: &str, source: Source) -> Self {
        let mut next = self.clone();
        next.0.insert((language, entry.to_string()), source);
        next
    }

    /// The hand-written program for `entry` in `language`, where there is one.
    pub(super) fn get(&self, language: Language, entry: &str) -> Option<Program> {
        let source = self.0.get(&(language, entry.to_string()))?;
        Some(Program::new(entry).source(language, source.clone()))
    }
}
