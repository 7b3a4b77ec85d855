# Ctrl-C during hostir.run: KeyboardInterrupt within a second, every rank
# stopped (no thread left behind), and the next run in the interpreter works.
import os
import signal
import threading
import time

import numpy as np
import pytest

import hostir
from test_run_options import DOUBLING


def thread_count():
    """This process's threads, Python's and hostir's alike."""
    return len(os.listdir("/proc/self/task"))


ON_THE_MAIN_THREAD = pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                                        reason="Python delivers signals to the main thread only")


def interrupted_within_a_second(call):
    """Sends this process SIGINT (Ctrl-C) 0.3 s into `call`, which must raise
    KeyboardInterrupt within a second of it; `call` must outlast 0.3 s."""
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.3, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        timer.join()
    assert sent, "the call ended before the signal"
    assert time.monotonic() - sent[0] < 1.0


@ON_THE_MAIN_THREAD
def test_ctrl_c_stops_every_rank_within_a_second():
    threads_before = thread_count()
    # Many minutes of runs, unless interrupted.
    interrupted_within_a_second(lambda: hostir.run(DOUBLING, ranks=2, params={"S": 100}, repeat=1_000_000))
    assert thread_count() == threads_before

    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(hostir.run(DOUBLING, {"x": x}, ranks=2)["y"], x * 8)
