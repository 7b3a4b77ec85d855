# tests/layers: the layer references sit beside the tests.
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "mpi: runs the layers under mpirun")
    config.addinivalue_line("markers", "cuda: runs the layers on a GPU (skipped without one)")
