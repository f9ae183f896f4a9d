"""Ctrl-C during a long fit raises KeyboardInterrupt within a second, and nothing keeps
computing afterwards: the fit's thread has stopped and the process is idle."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import sgpw


def tasks():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc (Linux)")
def test_ctrl_c_stops_a_long_fit():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (20000, 8))
    y = np.sin(X).sum(1) + 0.1 * rng.normal(size=20000)
    # warm up: rayon's pool threads exist before the count
    sgpw.fit(X[:200], y[:200], method="fitc", m=10, iterations=3)
    threads_before = tasks()
    sent = {}

    def interrupt():
        sent["at"] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(1.0, interrupt)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        # minutes of work: only the interrupt ends it
        sgpw.fit(X, y, method="fitc", m=300, iterations=100000)
    latency = time.perf_counter() - sent["at"]
    timer.join()
    assert latency < 1.0, f"KeyboardInterrupt {latency:.2f} s after SIGINT"
    # no thread left behind, and no work going on in any of them
    assert tasks() <= threads_before
    cpu = time.process_time()
    time.sleep(0.5)
    assert time.process_time() - cpu < 0.1
    # and the next fit runs as usual
    model = sgpw.fit(X[:200], y[:200], method="fitc", m=10, iterations=5)
    assert np.isfinite(model.nlml)
