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
  // compinit finds _dlock in $fpath: ~/.zshenv is read before ~/.zshrc (and /etc/zsh/zshrc), so
  // the fpath is in place before any compinit of the user's; one is added only if ~/.zshrc has none.
  zsh: [
    'mkdir -p ~/.zfunc',
    'dlock completion zsh > ~/.zfunc/_dlock',
    "echo 'fpath=(~/.zfunc $fpath)' >> ~/.zshenv",
    'grep -qs compinit ~/.zshrc ||',
    "  echo 'autoload -Uz compinit && compinit' >> ~/.zshrc",
  ],
  fish: ['mkdir -p ~/.config/fish/completions', 'dlock completion fish > ~/.config/fish/completions/dlock.fish'],
};
