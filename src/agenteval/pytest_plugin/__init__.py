"""pytest integration: eval-set and test files collected as one test item per eval case."""
