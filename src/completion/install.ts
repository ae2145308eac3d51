// Where each shell finds a completion script on its own, and the lines that put it there: they
// work on a fresh machine (mkdir -p), and are printed by `dlock completion --help` and at the
// top of each script.

export type Shell = 'bash' | 'zsh' | 'fish';
export type InstallLines = Record<Shell, string[]>;

export const INSTALL_LINES: InstallLines = {
  // bash-completion loads it the first time dlock is completed.
  bash: [
    'mkdir -p ~/.local/share/bash-completion/completions',
    'dlock completion bash > ~/.local/share/bash-completion/completions/dlock',
  ],
  // compinit finds _dlock in $fpath; a second compinit after an earlier one still sees it.
  zsh: [
    'mkdir -p ~/.zfunc',
    'dlock completion zsh > ~/.zfunc/_dlock',
    "echo 'fpath=(~/.zfunc $fpath); autoload -Uz compinit && compinit' >> ~/.zshrc",
  ],
  fish: ['mkdir -p ~/.config/fish/completions', 'dlock completion fish > ~/.config/fish/completions/dlock.fish'],
};
