/*
 * analysis_wb.h: the code points whose word-break class analysis.c cannot
 * take from utf8proc's general category and grapheme boundclass alone
 * (internal to analysis.c, which includes it once).
 *
 * Made by tools/wb_ranges.pl (its header says what each row corrects) from
 * the Unicode 14 data of perl 5.36: WordBreakProperty.txt (UAX #29 table
 * 3), Line_Break=Complex_Context of LineBreak.txt and Script=Han/Hiragana
 * of Scripts.txt, the three sets Lucene's StandardTokenizerImpl.jflex
 * tokenizes besides the word rules.  Sorted, disjoint; a row applies only
 * to assigned code points (it may span unassigned ones).  A row whose class
 * is WB_F_SA or WB_F_IDEO sets that flag and leaves the class under it to
 * the category (Extend for marks, Other for the rest).
 */
#ifndef FDS_ANALYSIS_WB_H
#define FDS_ANALYSIS_WB_H

typedef struct wb_range {
    uint32_t lo, hi; /* code points, inclusive */
    uint8_t cls;     /* WB_* class or flag */
} wb_range;

static const wb_range WB_RANGES[] = {
    {0x00B7, 0x00B7, WB_MIDLETTER},
    {0x02C2, 0x02C5, WB_ALETTER},
    {0x02D2, 0x02D7, WB_ALETTER},
    {0x02DE, 0x02DF, WB_ALETTER},
    {0x02E5, 0x02EB, WB_ALETTER},
    {0x02ED, 0x02ED, WB_ALETTER},
    {0x02EF, 0x02FF, WB_ALETTER},
    {0x037E, 0x037E, WB_MIDNUM},
    {0x0387, 0x0387, WB_MIDLETTER},
    {0x055A, 0x055C, WB_ALETTER},
    {0x055E, 0x055E, WB_ALETTER},
    {0x055F, 0x055F, WB_MIDLETTER},
    {0x0589, 0x0589, WB_MIDNUM},
    {0x058A, 0x058A, WB_ALETTER},
    {0x05D0, 0x05F2, WB_HEBREW},
    {0x05F3, 0x05F3, WB_ALETTER},
    {0x05F4, 0x05F4, WB_MIDLETTER},
    {0x060C, 0x060D, WB_MIDNUM},
    {0x066B, 0x066B, WB_NUMERIC},
    {0x066C, 0x066C, WB_MIDNUM},
    {0x07F8, 0x07F8, WB_MIDNUM},
    {0x0E01, 0x0E3A, WB_F_SA},
    {0x0E40, 0x0E4E, WB_F_SA},
    {0x0E81, 0x0ECD, WB_F_SA},
    {0x0EDC, 0x0EDF, WB_F_SA},
    {0x1000, 0x103F, WB_F_SA},
    {0x1050, 0x108F, WB_F_SA},
    {0x109A, 0x109F, WB_F_SA},
    {0x1780, 0x17D3, WB_F_SA},
    {0x17D7, 0x17D7, WB_F_SA},
    {0x17DC, 0x17DD, WB_F_SA},
    {0x1950, 0x19C9, WB_F_SA},
    {0x19DA, 0x19DF, WB_F_SA},
    {0x1A20, 0x1A7C, WB_F_SA},
    {0x1AA0, 0x1AAD, WB_F_SA},
    {0x200B, 0x200B, WB_OTHER},
    {0x2018, 0x2019, WB_MIDNUMLET},
    {0x2024, 0x2024, WB_MIDNUMLET},
    {0x2027, 0x2027, WB_MIDLETTER},
    {0x202F, 0x202F, WB_EXTNUMLET},
    {0x2044, 0x2044, WB_MIDNUM},
    {0x24B6, 0x24E9, WB_ALETTER},
    {0x2E80, 0x2FD5, WB_F_IDEO},
    {0x3006, 0x3006, WB_OTHER},
    {0x3007, 0x3007, WB_F_IDEO},
    {0x3021, 0x3029, WB_F_IDEO},
    {0x3031, 0x3035, WB_KATAKANA},
    {0x3038, 0x303A, WB_F_IDEO},
    {0x3041, 0x3096, WB_F_IDEO},
    {0x309B, 0x309C, WB_KATAKANA},
    {0x309D, 0x309F, WB_F_IDEO},
    {0x30A0, 0x30FA, WB_KATAKANA},
    {0x30FC, 0x30FF, WB_KATAKANA},
    {0x31F0, 0x31FF, WB_KATAKANA},
    {0x32D0, 0x32FE, WB_KATAKANA},
    {0x3300, 0x3357, WB_KATAKANA},
    {0x3400, 0x4DBF, WB_F_IDEO},
    {0x4E00, 0x9FFF, WB_F_IDEO},
    {0xA708, 0xA716, WB_ALETTER},
    {0xA720, 0xA721, WB_ALETTER},
    {0xA789, 0xA78A, WB_ALETTER},
    {0xA9E0, 0xA9EF, WB_F_SA},
    {0xA9FA, 0xA9FE, WB_F_SA},
    {0xAA60, 0xAADF, WB_F_SA},
    {0xAB5B, 0xAB5B, WB_ALETTER},
    {0xF900, 0xFAD9, WB_F_IDEO},
    {0xFB1D, 0xFB1D, WB_HEBREW},
    {0xFB1F, 0xFB28, WB_HEBREW},
    {0xFB2A, 0xFB4F, WB_HEBREW},
    {0xFE10, 0xFE10, WB_MIDNUM},
    {0xFE13, 0xFE13, WB_MIDLETTER},
    {0xFE14, 0xFE14, WB_MIDNUM},
    {0xFE50, 0xFE50, WB_MIDNUM},
    {0xFE52, 0xFE52, WB_MIDNUMLET},
    {0xFE54, 0xFE54, WB_MIDNUM},
    {0xFE55, 0xFE55, WB_MIDLETTER},
    {0xFF07, 0xFF07, WB_MIDNUMLET},
    {0xFF0C, 0xFF0C, WB_MIDNUM},
    {0xFF0E, 0xFF0E, WB_MIDNUMLET},
    {0xFF1A, 0xFF1A, WB_MIDLETTER},
    {0xFF1B, 0xFF1B, WB_MIDNUM},
    {0xFF66, 0xFF9D, WB_KATAKANA},
    {0x11700, 0x1172B, WB_F_SA},
    {0x1173A, 0x1173B, WB_F_SA},
    {0x1173F, 0x11746, WB_F_SA},
    {0x16FE2, 0x16FE2, WB_F_IDEO},
    {0x16FF0, 0x16FF1, WB_F_IDEO},
    {0x17000, 0x18D08, WB_OTHER},
    {0x1AFF0, 0x1B000, WB_KATAKANA},
    {0x1B001, 0x1B11F, WB_F_IDEO},
    {0x1B120, 0x1B122, WB_KATAKANA},
    {0x1B150, 0x1B152, WB_F_IDEO},
    {0x1B164, 0x1B167, WB_KATAKANA},
    {0x1B170, 0x1B2FB, WB_OTHER},
    {0x1F130, 0x1F149, WB_ALETTER},
    {0x1F150, 0x1F169, WB_ALETTER},
    {0x1F170, 0x1F189, WB_ALETTER},
    {0x1F1E6, 0x1F1FF, WB_RI},
    {0x1F200, 0x1F200, WB_F_IDEO},
    {0x20000, 0x3134A, WB_F_IDEO},
};

#endif
