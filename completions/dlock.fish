# dlock fish completion (placeholder)
