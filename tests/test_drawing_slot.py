"""The live pages' drawing slot (pcrp.app.drawing_slot.DrawingSlot): one frame is drawn at a time, and the redraw that
follows a button press goes before the periodic frames that wait (thirty pages' frames queued ahead of a Pause held
the press for seconds)."""

import threading
import time

from pcrp.app.drawing_slot import DrawingSlot


def test_a_press_goes_before_the_frames_that_wait_and_one_holder_at_a_time():
    slot = DrawingSlot()
    order, inside, most = [], [0], [0]
    lock = threading.Lock()

    def draw(name, urgent):
        assert slot.acquire(urgent=urgent, timeout=10)
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            order.append(name)
        time.sleep(0.02)
        with lock:
            inside[0] -= 1
        slot.release()

    assert slot.acquire()  # a frame is being drawn
    frames = [threading.Thread(target=draw, args=(f"frame {i}", False)) for i in range(5)]
    for t in frames:
        t.start()
    time.sleep(0.2)  # the frames wait
    press = threading.Thread(target=draw, args=("press", True))
    press.start()
    time.sleep(0.2)
    slot.release()
    for t in frames + [press]:
        t.join(10)
    assert order[0] == "press" and sorted(order[1:]) == [f"frame {i}" for i in range(5)]
    assert most[0] == 1


def test_a_wait_for_the_slot_ends_at_its_timeout():
    slot = DrawingSlot()
    assert slot.acquire()
    began = time.monotonic()
    assert not slot.acquire(timeout=0.1) and not slot.acquire(urgent=True, timeout=0.1)
    assert time.monotonic() - began < 2
    slot.release()
    assert slot.acquire(timeout=0.1)
