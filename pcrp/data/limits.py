"""The data's size limits, in one place.

The loaders read these at call time (``limits.MAX_ROWS``, not a copy), so that tests can lower them.
"""

# Limits. The library and the command line take up to MAX_ROWS rows from files of up to MAX_BYTES (a
# 1,000,000 x 2 CSV is about 20-40 MB; parsing holds every cell as a Python string for a moment, about 60 bytes
# a cell). The app takes APP_MAX_ROWS rows from uploads of up to APP_MAX_BYTES, so that one visitor's sweep stays
# interactive on 2 cores: at N = 100,000, d = 2 and K = 10 clusters a sweep is about 100,000 x 11 x 50 ns = 55 ms.
MAX_BYTES = 128 * 1024 * 1024
MAX_ROWS = 1_000_000
APP_MAX_BYTES = 10 * 1024 * 1024
APP_MAX_ROWS = 100_000
MAX_FILE_COLUMNS = 500
MAX_CLUSTER_COLUMNS = 50

# Default sizes of the built-in data sets (the loaders, the command line and the app's live demo read these).
SIMULATION_N = 300  # points drawn from a simulation, as the paper's Table 1
MNIST_N = 1000  # MNIST images drawn, spread over the chosen digits
MNIST_PER_DIGIT = 1000  # images of each digit in the bundled MNIST file
MNIST_BUNDLED = 10 * MNIST_PER_DIGIT  # images in the bundled MNIST file
# The first 500 of each digit are the earlier bundle's (mnist_5k.npz): pcrp.data.mnist draws from them alone when
# N <= 500 x the number of digits, so that every such draw is the data it was before the bundle grew.
MNIST_FIRST_PER_DIGIT = 500
