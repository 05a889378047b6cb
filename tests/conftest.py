import pytest

# A small, fast variant of EWT scenario 2 for tests: few flows, small files.
SMALL = {"flows": 4, "file_bytes": "300kB"}


@pytest.fixture
def small():
    return dict(SMALL)
