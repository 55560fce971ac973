"""Front ends: each turns one input language into :class:`leapgram.grammar.GrammarIR`."""
