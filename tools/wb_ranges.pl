#!/usr/bin/env perl
# tools/wb_ranges.pl: prints the rows of src/query/mapping/analysis_wb.h, the code
# points whose word-break class the analyzer cannot take from utf8proc's
# general category alone.
#
# The analyzer (src/query/mapping/analysis.c, wb_class) starts from the general
# category and utf8proc's grapheme boundclass:
#   Grapheme_Extend, Emoji_Modifier, Mc, Cf -> Extend (UAX #29 Extend,
#                                             Format and ZWJ alike, WB4)
#   L*, Nl -> ALetter;  Nd -> Numeric;  Pc -> ExtendNumLet;  else Other
# and this table corrects it where the Unicode data says otherwise:
#   - the Word_Break property (WordBreakProperty.txt) where it differs from
#     the above: MidLetter, MidNum, MidNumLet, Katakana, Hebrew_Letter,
#     Regional_Indicator, the ALetter punctuation and symbols, ExtendNumLet
#     U+202F, U+200B (Cf, but not Format), ideographs that are not ALetter;
#   - the three classes Lucene's StandardTokenizerImpl.jflex tokenizes
#     outside UAX #29: Line_Break=Complex_Context (SA: Thai, Lao, Myanmar,
#     Khmer ... runs) and Script=Han / Script=Hiragana (one character a
#     token).  Their rows carry only the flag; the class under it stays
#     Extend for their marks and becomes Other for the rest.
# Rows merge across unassigned code points: the analyzer applies a row only
# to an assigned code point.
#
# The data is the Unicode version this perl was built with (perl 5.36:
# Unicode 14).  Usage: perl tools/wb_ranges.pl > rows.txt, then paste the
# rows into src/query/mapping/analysis_wb.h.
use strict;
use warnings;

my @WB = qw(ALetter Hebrew_Letter Numeric Katakana ExtendNumLet MidLetter
            MidNumLet MidNum Extend Format ZWJ Regional_Indicator);
my %CNAME = (ALetter => 'WB_ALETTER', Hebrew_Letter => 'WB_HEBREW',
             Numeric => 'WB_NUMERIC', Katakana => 'WB_KATAKANA',
             ExtendNumLet => 'WB_EXTNUMLET', MidLetter => 'WB_MIDLETTER',
             MidNumLet => 'WB_MIDNUMLET', MidNum => 'WB_MIDNUM',
             Extend => 'WB_EXTEND', Regional_Indicator => 'WB_RI',
             Other => 'WB_OTHER', SA => 'WB_F_SA', IDEO => 'WB_F_IDEO');

sub default_class {
    my ($ch) = @_;
    return 'Extend'
        if $ch =~ /\p{Grapheme_Extend}|\p{Emoji_Modifier}|\p{Mc}|\p{Cf}/;
    return 'ALetter' if $ch =~ /\p{L}|\p{Nl}/;
    return 'Numeric' if $ch =~ /\p{Nd}/;
    return 'ExtendNumLet' if $ch =~ /\p{Pc}/;
    return 'Other';
}

my @rows;
for my $c (0x80 .. 0x10FFFF) {
    next if $c >= 0xD800 && $c <= 0xDFFF;
    my $ch = chr $c;
    next if $ch =~ /\p{Cn}/;
    my ($wb) = grep { $ch =~ /\p{WB=$_}/ } @WB;
    $wb //= 'Other';
    $wb = 'Extend' if $wb eq 'Format' || $wb eq 'ZWJ';
    my $def = default_class($ch);
    my $key = '';
    if ($wb eq 'Other' || $wb eq 'Extend') {
        if ($ch =~ /\p{LB=SA}/) {
            $key = 'SA';
        } elsif ($ch =~ /\p{Script=Han}|\p{Script=Hiragana}/) {
            $key = 'IDEO';
        }
        die sprintf("U+%04X: %s under a flag, category says %s\n", $c, $wb, $def)
            if $key && $wb ne ($def eq 'Extend' ? 'Extend' : 'Other');
    }
    $key = $wb if !$key && $wb ne $def;
    if (@rows && $rows[-1][2] eq $key) {
        $rows[-1][1] = $c;
    } else {
        push @rows, [$c, $c, $key];
    }
}
for my $r (grep { $_->[2] ne '' } @rows) {
    printf "    {0x%04X, 0x%04X, %s},\n", $r->[0], $r->[1], $CNAME{$r->[2]};
}
