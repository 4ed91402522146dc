# SPDX-License-Identifier: MIT
"""Loads the consumer's trials.csv with pandas and checks its columns and values, then its failures.csv,
whose failure reasons held Latin-1 bytes (exit 77: no pandas)."""
import sys

try:
    import pandas as pd
except ImportError:
    print("pandas is not installed (apt-get install python3-pandas): skipped")
    sys.exit(77)

df = pd.read_csv(sys.argv[1], parse_dates=["TrainingStartTime", "TrainingEndTime"])
expected = ["TrainingJobName", "TrainingJobStatus", "FinalObjectiveValue", "TrainingStartTime", "TrainingEndTime",
            "TrainingElapsedTimeSeconds", "x", "n", "kind", "TrialId", "ResourceUsed", "BillableSeconds", "Retries",
            "FailureReason"]
assert list(df.columns) == expected, list(df.columns)
assert len(df) == 40, len(df)
assert (df["TrainingJobStatus"] == "Completed").all()
assert df["x"].between(-2, 2).all() and df["n"].between(1, 8).all()
assert set(df["kind"]) <= {"a", "b"}
expected_objective = df["x"] ** 2 + 0.1 * df["n"] + (df["kind"] == "b") * 0.5
assert ((df["FinalObjectiveValue"] - expected_objective).abs() < 1e-9).all()
assert (df["TrainingEndTime"] >= df["TrainingStartTime"]).all()
assert str(df["TrainingStartTime"].dt.tz) == "UTC"
print(f"pandas {pd.__version__} read {len(df)} trials; best {df['FinalObjectiveValue'].min():.4f}")

# Invalid UTF-8 in a failure reason once made read_csv raise UnicodeDecodeError on the whole file.
failures = pd.read_csv(sys.argv[2])
assert len(failures) == 3 and (failures["TrainingJobStatus"] == "Failed").all(), failures
assert failures["FailureReason"].str.contains("r\ufffdsultat invalide").all(), list(failures["FailureReason"])
print(f"pandas read the {len(failures)} failures, invalid bytes as U+FFFD")
