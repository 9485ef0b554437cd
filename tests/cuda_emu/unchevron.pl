#!/usr/bin/perl
# cuda-emu: rewrites CUDA launches for a host C++ compiler (see include/cuda_runtime.h):
#   name<targs><<<grid, block, smem, stream>>>(args)
#     -> tg_emu_launch("name<targs>", name<targs>, grid, block, smem, stream)(args)
# Everything else, line breaks included, is left as it is, and a #line directive makes
# diagnostics name the original file and line.   Usage: unchevron.pl SRC > OUT
use strict;
use warnings;
my $src = shift @ARGV or die "usage: unchevron.pl SRC\n";
open(my $fh, '<', $src) or die "unchevron.pl: $src: $!\n";
my $text = do { local $/; <$fh> };
$text =~ s{([A-Za-z_]\w*(?:<[^<>;()]*>)?)\s*<<<(.*?)>>>\s*\(}{tg_emu_launch("$1", $1, $2)(}gs;
die "unchevron.pl: $src: a launch the rewrite did not understand\n" if $text =~ /<<</;
print "#line 1 \"$src\"\n", $text;
