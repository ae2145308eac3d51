# dlock bash completion (placeholder)
