//! A target with exactly two values is a classification target: when such a data set
//! loads the status line says so, and the new-runs form opened on it (or switched to
//! it) chooses `likelihood bernoulli` where the likelihood is still the default, saying
//! so in the status line and in the field's help. The user can choose another; a
//! likelihood the user chose is never changed.

use crate::likelihoods::BinaryLabels;
use crate::tui::form::{Form, Value};
use crate::tui::state::{App, DataState};

/// The new-runs form's likelihood field.
const FIELD: &str = "opt:likelihood";
/// What the app appends to the field's help when it chose bernoulli, so that a data set
/// chosen later whose target is not binary puts the default back.
const CHOSEN: &str = " · chosen by the app: the target has two values";

impl App {
    /// The two labels of data set `name`'s training target when it has exactly two
    /// (and has loaded): its words where the file's target held text or booleans (read
    /// as the codes 0 and 1 by the loader), else its two numbers.
    pub fn binary_labels(&self, name: &str) -> Option<[String; 2]> {
        let Some(DataState::Loaded(d)) = self.data.get(name) else {
            return None;
        };
        if let Some(c) = &d.classes {
            return Some(c.names.clone());
        }
        BinaryLabels::of(d.y_train.as_slice())
            .ok()
            .map(|l| l.labels.map(|v| v.to_string()))
    }

    /// What the status line adds when data set `name` loads with a binary target.
    pub(super) fn binary_note(&self, name: &str) -> Option<String> {
        let [zero, one] = self.binary_labels(name)?;
        Some(format!(
            "; its target has two values ({zero}, {one}): new runs (n) on it take likelihood \
             bernoulli"
        ))
    }

    /// In the new-runs form `f`: bernoulli where its data set's target has two values and
    /// the likelihood is the default; the default back where the app had chosen
    /// bernoulli and the data set now has another target. What to say, if it changed.
    pub(super) fn offer_likelihood(&self, f: &mut Form) -> Option<String> {
        let dataset = f.text("dataset");
        let labels = self.binary_labels(&dataset);
        let field = f.fields.iter_mut().find(|x| x.key == FIELD)?;
        let Value::Choice { options, index } = &mut field.value else {
            return None;
        };
        let chosen_by_app = field.help.ends_with(CHOSEN);
        let at = |name: &str| options.iter().position(|o| o == name);
        match labels {
            Some([zero, one]) if *index == 0 => {
                *index = at("bernoulli")?;
                field.help.push_str(CHOSEN);
                Some(format!(
                    "{dataset}: the target has two values ({zero}, {one}): likelihood \
                     bernoulli chosen; the form changes it"
                ))
            }
            None if chosen_by_app => {
                field.help.truncate(field.help.len() - CHOSEN.len());
                if options.get(*index).is_some_and(|o| o == "bernoulli") {
                    *index = 0;
                    return Some(format!(
                        "{dataset}: the target is not binary: likelihood back to the default"
                    ));
                }
                None
            }
            _ => None,
        }
    }
}
