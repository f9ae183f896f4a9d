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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::state::Event;
    use crate::tui::testing::*;

    #[test]
    fn replay_advances_with_ticks_and_speed() {
        let mut a = loaded();
        let k = a.runs[0].key.clone();
        let mut r = done(&k, 0.5);
        r.trace = (0..100).map(|i| 100.0 - i as f64).collect();
        a.session.set_result(r);
        a.update(ch('r'));
        assert!(a.animating());
        a.update(Event::Tick(Duration::from_secs(1)));
        assert_eq!(a.replay.as_ref().map(|r| r.shown), Some(21.0));
        a.update(ch('+'));
        a.update(Event::Tick(Duration::from_secs(10)));
        assert_eq!(a.replay.as_ref().map(|r| r.shown), Some(100.0));
        assert!(!a.animating());
        a.update(ch('r'));
        assert!(a.replay.is_none());
    }

    #[test]
    fn replay_needs_a_trace() {
        let mut a = loaded();
        a.update(ch('r'));
        assert!(a.replay.is_none() && a.message_is_error);
    }
}
