# dlock zsh completion (placeholder)
