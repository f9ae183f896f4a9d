//! Replaying a finished run's evidence curve, advanced by ticks.

use crate::tui::state::{Activity, App, ChartTab, Replay, SPEEDS};
use std::time::Duration;

/// The replay speed a replay starts at (an index into [`SPEEDS`]).
const DEFAULT_SPEED: usize = 4;

impl App {
    pub(super) fn tick(&mut self, dt: Duration) {
        let Some(r) = &self.replay else { return };
        let len = self
            .runs
            .iter()
            .find(|row| row.key == r.key)
            .map_or(0, |row| self.trace_of(row).len()) as f64;
        let speed = SPEEDS[r.speed.min(SPEEDS.len() - 1)];
        if let Some(r) = &mut self.replay {
            let before = r.shown;
            r.shown = (r.shown + speed * dt.as_secs_f64()).min(len);
            if before < len && r.shown >= len {
                self.message = "replay finished (r or Esc leaves it)".into();
                self.message_is_error = false;
            }
        }
    }

    pub(super) fn toggle_replay(&mut self) {
        if self.replay.take().is_some() {
            self.say("replay stopped");
            return;
        }
        let Some(row) = self.selected_run() else {
            return;
        };
        let len = self.result_of(row).map_or(0, |r| r.trace.len());
        if row.activity != Activity::Idle || len == 0 {
            self.fail("replay needs a finished run with a recorded evidence curve");
            return;
        }
        self.replay = Some(Replay {
            key: row.key.clone(),
            shown: 1.0,
            speed: DEFAULT_SPEED,
        });
        self.chart = ChartTab::Evidence;
        self.say(format!(
            "replaying {len} iterations at {} it/s (+/- speed, r stops)",
            SPEEDS[DEFAULT_SPEED]
        ));
    }

    pub(super) fn change_speed(&mut self, d: i64) {
        if let Some(r) = &mut self.replay {
            r.speed = (r.speed as i64 + d).clamp(0, SPEEDS.len() as i64 - 1) as usize;
            let s = SPEEDS[r.speed];
            self.say(format!("replay speed {s} it/s"));
        } else {
            self.say("+/- set the replay speed; r starts a replay");
        }
    }
}
