//go:build amd64 && !purego

#include "textflag.h"
#include "winotransform_amd64.h"

// The F(4×4, 5×5) transforms of winotransform.go over 8 lanes at once:
// lane l of every vector belongs to sample l of a group (convwino.go), so
// a kernel transforms one tile of one channel for 8 samples. The 1-D
// transforms (BT8, B8, AT8, A8) use every vector register; their
// constants are operands in memory (winoC8: each a 64-byte row of one
// float, the first 32 bytes for AVX2), and the intermediate 8×8 (or 8×4)
// tile sits on the stack.

DATA ·winoC8+0(SB)/4, $0x40a80000
DATA ·winoC8+4(SB)/4, $0x40a80000
DATA ·winoC8+8(SB)/4, $0x40a80000
DATA ·winoC8+12(SB)/4, $0x40a80000
DATA ·winoC8+16(SB)/4, $0x40a80000
DATA ·winoC8+20(SB)/4, $0x40a80000
DATA ·winoC8+24(SB)/4, $0x40a80000
DATA ·winoC8+28(SB)/4, $0x40a80000
DATA ·winoC8+32(SB)/4, $0x40a80000
DATA ·winoC8+36(SB)/4, $0x40a80000
DATA ·winoC8+40(SB)/4, $0x40a80000
DATA ·winoC8+44(SB)/4, $0x40a80000
DATA ·winoC8+48(SB)/4, $0x40a80000
DATA ·winoC8+52(SB)/4, $0x40a80000
DATA ·winoC8+56(SB)/4, $0x40a80000
DATA ·winoC8+60(SB)/4, $0x40a80000
DATA ·winoC8+64(SB)/4, $0x40880000
DATA ·winoC8+68(SB)/4, $0x40880000
DATA ·winoC8+72(SB)/4, $0x40880000
DATA ·winoC8+76(SB)/4, $0x40880000
DATA ·winoC8+80(SB)/4, $0x40880000
DATA ·winoC8+84(SB)/4, $0x40880000
DATA ·winoC8+88(SB)/4, $0x40880000
DATA ·winoC8+92(SB)/4, $0x40880000
DATA ·winoC8+96(SB)/4, $0x40880000
DATA ·winoC8+100(SB)/4, $0x40880000
DATA ·winoC8+104(SB)/4, $0x40880000
DATA ·winoC8+108(SB)/4, $0x40880000
DATA ·winoC8+112(SB)/4, $0x40880000
DATA ·winoC8+116(SB)/4, $0x40880000
DATA ·winoC8+120(SB)/4, $0x40880000
DATA ·winoC8+124(SB)/4, $0x40880000
DATA ·winoC8+128(SB)/4, $0x3e800000
DATA ·winoC8+132(SB)/4, $0x3e800000
DATA ·winoC8+136(SB)/4, $0x3e800000
DATA ·winoC8+140(SB)/4, $0x3e800000
DATA ·winoC8+144(SB)/4, $0x3e800000
DATA ·winoC8+148(SB)/4, $0x3e800000
DATA ·winoC8+152(SB)/4, $0x3e800000
DATA ·winoC8+156(SB)/4, $0x3e800000
DATA ·winoC8+160(SB)/4, $0x3e800000
DATA ·winoC8+164(SB)/4, $0x3e800000
DATA ·winoC8+168(SB)/4, $0x3e800000
DATA ·winoC8+172(SB)/4, $0x3e800000
DATA ·winoC8+176(SB)/4, $0x3e800000
DATA ·winoC8+180(SB)/4, $0x3e800000
DATA ·winoC8+184(SB)/4, $0x3e800000
DATA ·winoC8+188(SB)/4, $0x3e800000
DATA ·winoC8+192(SB)/4, $0x3fa00000
DATA ·winoC8+196(SB)/4, $0x3fa00000
DATA ·winoC8+200(SB)/4, $0x3fa00000
DATA ·winoC8+204(SB)/4, $0x3fa00000
DATA ·winoC8+208(SB)/4, $0x3fa00000
DATA ·winoC8+212(SB)/4, $0x3fa00000
DATA ·winoC8+216(SB)/4, $0x3fa00000
DATA ·winoC8+220(SB)/4, $0x3fa00000
DATA ·winoC8+224(SB)/4, $0x3fa00000
DATA ·winoC8+228(SB)/4, $0x3fa00000
DATA ·winoC8+232(SB)/4, $0x3fa00000
DATA ·winoC8+236(SB)/4, $0x3fa00000
DATA ·winoC8+240(SB)/4, $0x3fa00000
DATA ·winoC8+244(SB)/4, $0x3fa00000
DATA ·winoC8+248(SB)/4, $0x3fa00000
DATA ·winoC8+252(SB)/4, $0x3fa00000
DATA ·winoC8+256(SB)/4, $0x3f000000
DATA ·winoC8+260(SB)/4, $0x3f000000
DATA ·winoC8+264(SB)/4, $0x3f000000
DATA ·winoC8+268(SB)/4, $0x3f000000
DATA ·winoC8+272(SB)/4, $0x3f000000
DATA ·winoC8+276(SB)/4, $0x3f000000
DATA ·winoC8+280(SB)/4, $0x3f000000
DATA ·winoC8+284(SB)/4, $0x3f000000
DATA ·winoC8+288(SB)/4, $0x3f000000
DATA ·winoC8+292(SB)/4, $0x3f000000
DATA ·winoC8+296(SB)/4, $0x3f000000
DATA ·winoC8+300(SB)/4, $0x3f000000
DATA ·winoC8+304(SB)/4, $0x3f000000
DATA ·winoC8+308(SB)/4, $0x3f000000
DATA ·winoC8+312(SB)/4, $0x3f000000
DATA ·winoC8+316(SB)/4, $0x3f000000
DATA ·winoC8+320(SB)/4, $0x40200000
DATA ·winoC8+324(SB)/4, $0x40200000
DATA ·winoC8+328(SB)/4, $0x40200000
DATA ·winoC8+332(SB)/4, $0x40200000
DATA ·winoC8+336(SB)/4, $0x40200000
DATA ·winoC8+340(SB)/4, $0x40200000
DATA ·winoC8+344(SB)/4, $0x40200000
DATA ·winoC8+348(SB)/4, $0x40200000
DATA ·winoC8+352(SB)/4, $0x40200000
DATA ·winoC8+356(SB)/4, $0x40200000
DATA ·winoC8+360(SB)/4, $0x40200000
DATA ·winoC8+364(SB)/4, $0x40200000
DATA ·winoC8+368(SB)/4, $0x40200000
DATA ·winoC8+372(SB)/4, $0x40200000
DATA ·winoC8+376(SB)/4, $0x40200000
DATA ·winoC8+380(SB)/4, $0x40200000
DATA ·winoC8+384(SB)/4, $0x40000000
DATA ·winoC8+388(SB)/4, $0x40000000
DATA ·winoC8+392(SB)/4, $0x40000000
DATA ·winoC8+396(SB)/4, $0x40000000
DATA ·winoC8+400(SB)/4, $0x40000000
DATA ·winoC8+404(SB)/4, $0x40000000
DATA ·winoC8+408(SB)/4, $0x40000000
DATA ·winoC8+412(SB)/4, $0x40000000
DATA ·winoC8+416(SB)/4, $0x40000000
DATA ·winoC8+420(SB)/4, $0x40000000
DATA ·winoC8+424(SB)/4, $0x40000000
DATA ·winoC8+428(SB)/4, $0x40000000
DATA ·winoC8+432(SB)/4, $0x40000000
DATA ·winoC8+436(SB)/4, $0x40000000
DATA ·winoC8+440(SB)/4, $0x40000000
DATA ·winoC8+444(SB)/4, $0x40000000
DATA ·winoC8+448(SB)/4, $0x40800000
DATA ·winoC8+452(SB)/4, $0x40800000
DATA ·winoC8+456(SB)/4, $0x40800000
DATA ·winoC8+460(SB)/4, $0x40800000
DATA ·winoC8+464(SB)/4, $0x40800000
DATA ·winoC8+468(SB)/4, $0x40800000
DATA ·winoC8+472(SB)/4, $0x40800000
DATA ·winoC8+476(SB)/4, $0x40800000
DATA ·winoC8+480(SB)/4, $0x40800000
DATA ·winoC8+484(SB)/4, $0x40800000
DATA ·winoC8+488(SB)/4, $0x40800000
DATA ·winoC8+492(SB)/4, $0x40800000
DATA ·winoC8+496(SB)/4, $0x40800000
DATA ·winoC8+500(SB)/4, $0x40800000
DATA ·winoC8+504(SB)/4, $0x40800000
DATA ·winoC8+508(SB)/4, $0x40800000
DATA ·winoC8+512(SB)/4, $0x40a00000
DATA ·winoC8+516(SB)/4, $0x40a00000
DATA ·winoC8+520(SB)/4, $0x40a00000
DATA ·winoC8+524(SB)/4, $0x40a00000
DATA ·winoC8+528(SB)/4, $0x40a00000
DATA ·winoC8+532(SB)/4, $0x40a00000
DATA ·winoC8+536(SB)/4, $0x40a00000
DATA ·winoC8+540(SB)/4, $0x40a00000
DATA ·winoC8+544(SB)/4, $0x40a00000
DATA ·winoC8+548(SB)/4, $0x40a00000
DATA ·winoC8+552(SB)/4, $0x40a00000
DATA ·winoC8+556(SB)/4, $0x40a00000
DATA ·winoC8+560(SB)/4, $0x40a00000
DATA ·winoC8+564(SB)/4, $0x40a00000
DATA ·winoC8+568(SB)/4, $0x40a00000
DATA ·winoC8+572(SB)/4, $0x40a00000
DATA ·winoC8+576(SB)/4, $0x41000000
DATA ·winoC8+580(SB)/4, $0x41000000
DATA ·winoC8+584(SB)/4, $0x41000000
DATA ·winoC8+588(SB)/4, $0x41000000
DATA ·winoC8+592(SB)/4, $0x41000000
DATA ·winoC8+596(SB)/4, $0x41000000
DATA ·winoC8+600(SB)/4, $0x41000000
DATA ·winoC8+604(SB)/4, $0x41000000
DATA ·winoC8+608(SB)/4, $0x41000000
DATA ·winoC8+612(SB)/4, $0x41000000
DATA ·winoC8+616(SB)/4, $0x41000000
DATA ·winoC8+620(SB)/4, $0x41000000
DATA ·winoC8+624(SB)/4, $0x41000000
DATA ·winoC8+628(SB)/4, $0x41000000
DATA ·winoC8+632(SB)/4, $0x41000000
DATA ·winoC8+636(SB)/4, $0x41000000
DATA ·winoC8+640(SB)/4, $0x3e000000
DATA ·winoC8+644(SB)/4, $0x3e000000
DATA ·winoC8+648(SB)/4, $0x3e000000
DATA ·winoC8+652(SB)/4, $0x3e000000
DATA ·winoC8+656(SB)/4, $0x3e000000
DATA ·winoC8+660(SB)/4, $0x3e000000
DATA ·winoC8+664(SB)/4, $0x3e000000
DATA ·winoC8+668(SB)/4, $0x3e000000
DATA ·winoC8+672(SB)/4, $0x3e000000
DATA ·winoC8+676(SB)/4, $0x3e000000
DATA ·winoC8+680(SB)/4, $0x3e000000
DATA ·winoC8+684(SB)/4, $0x3e000000
DATA ·winoC8+688(SB)/4, $0x3e000000
DATA ·winoC8+692(SB)/4, $0x3e000000
DATA ·winoC8+696(SB)/4, $0x3e000000
DATA ·winoC8+700(SB)/4, $0x3e000000
DATA ·winoC8+704(SB)/4, $0x41800000
DATA ·winoC8+708(SB)/4, $0x41800000
DATA ·winoC8+712(SB)/4, $0x41800000
DATA ·winoC8+716(SB)/4, $0x41800000
DATA ·winoC8+720(SB)/4, $0x41800000
DATA ·winoC8+724(SB)/4, $0x41800000
DATA ·winoC8+728(SB)/4, $0x41800000
DATA ·winoC8+732(SB)/4, $0x41800000
DATA ·winoC8+736(SB)/4, $0x41800000
DATA ·winoC8+740(SB)/4, $0x41800000
DATA ·winoC8+744(SB)/4, $0x41800000
DATA ·winoC8+748(SB)/4, $0x41800000
DATA ·winoC8+752(SB)/4, $0x41800000
DATA ·winoC8+756(SB)/4, $0x41800000
DATA ·winoC8+760(SB)/4, $0x41800000
DATA ·winoC8+764(SB)/4, $0x41800000
DATA ·winoC8+768(SB)/4, $0xbe638e39
DATA ·winoC8+772(SB)/4, $0xbe638e39
DATA ·winoC8+776(SB)/4, $0xbe638e39
DATA ·winoC8+780(SB)/4, $0xbe638e39
DATA ·winoC8+784(SB)/4, $0xbe638e39
DATA ·winoC8+788(SB)/4, $0xbe638e39
DATA ·winoC8+792(SB)/4, $0xbe638e39
DATA ·winoC8+796(SB)/4, $0xbe638e39
DATA ·winoC8+800(SB)/4, $0xbe638e39
DATA ·winoC8+804(SB)/4, $0xbe638e39
DATA ·winoC8+808(SB)/4, $0xbe638e39
DATA ·winoC8+812(SB)/4, $0xbe638e39
DATA ·winoC8+816(SB)/4, $0xbe638e39
DATA ·winoC8+820(SB)/4, $0xbe638e39
DATA ·winoC8+824(SB)/4, $0xbe638e39
DATA ·winoC8+828(SB)/4, $0xbe638e39
DATA ·winoC8+832(SB)/4, $0x3c360b61
DATA ·winoC8+836(SB)/4, $0x3c360b61
DATA ·winoC8+840(SB)/4, $0x3c360b61
DATA ·winoC8+844(SB)/4, $0x3c360b61
DATA ·winoC8+848(SB)/4, $0x3c360b61
DATA ·winoC8+852(SB)/4, $0x3c360b61
DATA ·winoC8+856(SB)/4, $0x3c360b61
DATA ·winoC8+860(SB)/4, $0x3c360b61
DATA ·winoC8+864(SB)/4, $0x3c360b61
DATA ·winoC8+868(SB)/4, $0x3c360b61
DATA ·winoC8+872(SB)/4, $0x3c360b61
DATA ·winoC8+876(SB)/4, $0x3c360b61
DATA ·winoC8+880(SB)/4, $0x3c360b61
DATA ·winoC8+884(SB)/4, $0x3c360b61
DATA ·winoC8+888(SB)/4, $0x3c360b61
DATA ·winoC8+892(SB)/4, $0x3c360b61
DATA ·winoC8+896(SB)/4, $0x3cb60b61
DATA ·winoC8+900(SB)/4, $0x3cb60b61
DATA ·winoC8+904(SB)/4, $0x3cb60b61
DATA ·winoC8+908(SB)/4, $0x3cb60b61
DATA ·winoC8+912(SB)/4, $0x3cb60b61
DATA ·winoC8+916(SB)/4, $0x3cb60b61
DATA ·winoC8+920(SB)/4, $0x3cb60b61
DATA ·winoC8+924(SB)/4, $0x3cb60b61
DATA ·winoC8+928(SB)/4, $0x3cb60b61
DATA ·winoC8+932(SB)/4, $0x3cb60b61
DATA ·winoC8+936(SB)/4, $0x3cb60b61
DATA ·winoC8+940(SB)/4, $0x3cb60b61
DATA ·winoC8+944(SB)/4, $0x3cb60b61
DATA ·winoC8+948(SB)/4, $0x3cb60b61
DATA ·winoC8+952(SB)/4, $0x3cb60b61
DATA ·winoC8+956(SB)/4, $0x3cb60b61
DATA ·winoC8+960(SB)/4, $0x3d360b61
DATA ·winoC8+964(SB)/4, $0x3d360b61
DATA ·winoC8+968(SB)/4, $0x3d360b61
DATA ·winoC8+972(SB)/4, $0x3d360b61
DATA ·winoC8+976(SB)/4, $0x3d360b61
DATA ·winoC8+980(SB)/4, $0x3d360b61
DATA ·winoC8+984(SB)/4, $0x3d360b61
DATA ·winoC8+988(SB)/4, $0x3d360b61
DATA ·winoC8+992(SB)/4, $0x3d360b61
DATA ·winoC8+996(SB)/4, $0x3d360b61
DATA ·winoC8+1000(SB)/4, $0x3d360b61
DATA ·winoC8+1004(SB)/4, $0x3d360b61
DATA ·winoC8+1008(SB)/4, $0x3d360b61
DATA ·winoC8+1012(SB)/4, $0x3d360b61
DATA ·winoC8+1016(SB)/4, $0x3d360b61
DATA ·winoC8+1020(SB)/4, $0x3d360b61
DATA ·winoC8+1024(SB)/4, $0x3db60b61
DATA ·winoC8+1028(SB)/4, $0x3db60b61
DATA ·winoC8+1032(SB)/4, $0x3db60b61
DATA ·winoC8+1036(SB)/4, $0x3db60b61
DATA ·winoC8+1040(SB)/4, $0x3db60b61
DATA ·winoC8+1044(SB)/4, $0x3db60b61
DATA ·winoC8+1048(SB)/4, $0x3db60b61
DATA ·winoC8+1052(SB)/4, $0x3db60b61
DATA ·winoC8+1056(SB)/4, $0x3db60b61
DATA ·winoC8+1060(SB)/4, $0x3db60b61
DATA ·winoC8+1064(SB)/4, $0x3db60b61
DATA ·winoC8+1068(SB)/4, $0x3db60b61
DATA ·winoC8+1072(SB)/4, $0x3db60b61
DATA ·winoC8+1076(SB)/4, $0x3db60b61
DATA ·winoC8+1080(SB)/4, $0x3db60b61
DATA ·winoC8+1084(SB)/4, $0x3db60b61
DATA ·winoC8+1088(SB)/4, $0x3e360b61
DATA ·winoC8+1092(SB)/4, $0x3e360b61
DATA ·winoC8+1096(SB)/4, $0x3e360b61
DATA ·winoC8+1100(SB)/4, $0x3e360b61
DATA ·winoC8+1104(SB)/4, $0x3e360b61
DATA ·winoC8+1108(SB)/4, $0x3e360b61
DATA ·winoC8+1112(SB)/4, $0x3e360b61
DATA ·winoC8+1116(SB)/4, $0x3e360b61
DATA ·winoC8+1120(SB)/4, $0x3e360b61
DATA ·winoC8+1124(SB)/4, $0x3e360b61
DATA ·winoC8+1128(SB)/4, $0x3e360b61
DATA ·winoC8+1132(SB)/4, $0x3e360b61
DATA ·winoC8+1136(SB)/4, $0x3e360b61
DATA ·winoC8+1140(SB)/4, $0x3e360b61
DATA ·winoC8+1144(SB)/4, $0x3e360b61
DATA ·winoC8+1148(SB)/4, $0x3e360b61
DATA ·winoC8+1152(SB)/4, $0x3eb60b61
DATA ·winoC8+1156(SB)/4, $0x3eb60b61
DATA ·winoC8+1160(SB)/4, $0x3eb60b61
DATA ·winoC8+1164(SB)/4, $0x3eb60b61
DATA ·winoC8+1168(SB)/4, $0x3eb60b61
DATA ·winoC8+1172(SB)/4, $0x3eb60b61
DATA ·winoC8+1176(SB)/4, $0x3eb60b61
DATA ·winoC8+1180(SB)/4, $0x3eb60b61
DATA ·winoC8+1184(SB)/4, $0x3eb60b61
DATA ·winoC8+1188(SB)/4, $0x3eb60b61
DATA ·winoC8+1192(SB)/4, $0x3eb60b61
DATA ·winoC8+1196(SB)/4, $0x3eb60b61
DATA ·winoC8+1200(SB)/4, $0x3eb60b61
DATA ·winoC8+1204(SB)/4, $0x3eb60b61
DATA ·winoC8+1208(SB)/4, $0x3eb60b61
DATA ·winoC8+1212(SB)/4, $0x3eb60b61
DATA ·winoC8+1216(SB)/4, $0x3f360b61
DATA ·winoC8+1220(SB)/4, $0x3f360b61
DATA ·winoC8+1224(SB)/4, $0x3f360b61
DATA ·winoC8+1228(SB)/4, $0x3f360b61
DATA ·winoC8+1232(SB)/4, $0x3f360b61
DATA ·winoC8+1236(SB)/4, $0x3f360b61
DATA ·winoC8+1240(SB)/4, $0x3f360b61
DATA ·winoC8+1244(SB)/4, $0x3f360b61
DATA ·winoC8+1248(SB)/4, $0x3f360b61
DATA ·winoC8+1252(SB)/4, $0x3f360b61
DATA ·winoC8+1256(SB)/4, $0x3f360b61
DATA ·winoC8+1260(SB)/4, $0x3f360b61
DATA ·winoC8+1264(SB)/4, $0x3f360b61
DATA ·winoC8+1268(SB)/4, $0x3f360b61
DATA ·winoC8+1272(SB)/4, $0x3f360b61
DATA ·winoC8+1276(SB)/4, $0x3f360b61
GLOBL ·winoC8(SB), RODATA|NOPTR, $1280


// ADD8S adds r0..r7 onto the vectors at p, p+s, …, p+7s; t ends at p+6s.
#define ADD8S(p, s, t, r0, r1, r2, r3, r4, r5, r6, r7) \
	VADDPS  (p), r0, r0;        \
	VMOVUPS r0, (p);            \
	VADDPS  (p)(s*1), r1, r1;   \
	VMOVUPS r1, (p)(s*1);       \
	VADDPS  (p)(s*2), r2, r2;   \
	VMOVUPS r2, (p)(s*2);       \
	LEAQ    (p)(s*2), t;        \
	VADDPS  (t)(s*1), r3, r3;   \
	VMOVUPS r3, (t)(s*1);       \
	VADDPS  (t)(s*2), r4, r4;   \
	VMOVUPS r4, (t)(s*2);       \
	LEAQ    (t)(s*2), t;        \
	VADDPS  (t)(s*1), r5, r5;   \
	VMOVUPS r5, (t)(s*1);       \
	VADDPS  (t)(s*2), r6, r6;   \
	VMOVUPS r6, (t)(s*2);       \
	LEAQ    (t)(s*2), t;        \
	VADDPS  (t)(s*1), r7, r7;   \
	VMOVUPS r7, (t)(s*1)

// func winoInputAVX2(dst *float32, stride int, src *float32, pitch int)
// dst[ξ·stride + l] = (Bᵀ d_l B)[ξ] for lanes l < 8, d_l[i][j] =
// src[i·pitch + 8j + l].
TEXT ·winoInputAVX2(SB), $2048-32
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ src+16(FP), SI
	MOVQ pitch+24(FP), DX
	SHLQ $2, DX
	// Columns: t[a][j] = (Bᵀ d[·][j])[a] at SP + 256a + 32j.
	MOVQ SP, R8
	MOVQ $8, CX

incol:
	LOAD8S(SI, DX, R9, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	BT8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STOREK(R8, 256, Y9, Y0, Y7, Y12, Y13, Y14, Y15, Y11)
	ADDQ $32, SI
	ADDQ $32, R8
	DECQ CX
	JNZ  incol

	// Rows: V[8a + b] = (Bᵀ t[a][·])[b].
	MOVQ SP, R8
	MOVQ $8, CX

inrow:
	LOADK(R8, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	BT8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STORE8S(DI, BX, R9, Y9, Y0, Y7, Y12, Y13, Y14, Y15, Y11)
	LEAQ (R9)(BX*2), DI
	ADDQ $256, R8
	DECQ CX
	JNZ  inrow
	VZEROUPPER
	RET

// func winoInputGradAVX2(dst *float32, pitch int, dv *float32, stride int)
// dst[i·pitch + 8j + l] += (B dV_l Bᵀ)[i][j] for lanes l < 8, dV_l[ξ] =
// dv[ξ·stride + l].
TEXT ·winoInputGradAVX2(SB), $2048-32
	MOVQ dst+0(FP), DI
	MOVQ pitch+8(FP), DX
	SHLQ $2, DX
	MOVQ dv+16(FP), SI
	MOVQ stride+24(FP), BX
	SHLQ $2, BX
	// Rows: t[a][j] = (B dV[a][·])[j] at SP + 256a + 32j.
	MOVQ SP, R8
	MOVQ $8, CX

igrow:
	LOAD8S(SI, BX, R9, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	B8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STOREK(R8, 32, Y0, Y4, Y1, Y5, Y2, Y6, Y3, Y7)
	LEAQ (R9)(BX*2), SI
	ADDQ $256, R8
	DECQ CX
	JNZ  igrow

	// Columns: dst[i][j] += (B t[·][j])[i].
	MOVQ SP, R8
	MOVQ $8, CX

igcol:
	LOADK(R8, 256, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	B8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	ADD8S(DI, DX, R9, Y0, Y4, Y1, Y5, Y2, Y6, Y3, Y7)
	ADDQ $32, DI
	ADDQ $32, R8
	DECQ CX
	JNZ  igcol
	VZEROUPPER
	RET

// func winoOutputAVX2(y *float32, pitch int, m *float32, stride int, b float32)
// y[i·pitch + 8j + l] = (Aᵀ M_l A)[i][j] + b for lanes l < 8, M_l[ξ] =
// m[ξ·stride + l].
TEXT ·winoOutputAVX2(SB), $1024-36
	MOVQ y+0(FP), DI
	MOVQ pitch+8(FP), DX
	SHLQ $2, DX
	MOVQ m+16(FP), SI
	MOVQ stride+24(FP), BX
	SHLQ $2, BX
	VBROADCASTSS b+32(FP), Y15
	// Rows: r_j[a] = (Aᵀ M[a][·])[j] at SP + 256j + 32a.
	MOVQ SP, R8
	MOVQ $8, CX

orow:
	LOAD8S(SI, BX, R9, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	AT8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	VMOVUPS Y0, (R8)
	VMOVUPS Y1, 256(R8)
	VMOVUPS Y2, 512(R8)
	VMOVUPS Y3, 768(R8)
	LEAQ    (R9)(BX*2), SI
	ADDQ    $32, R8
	DECQ    CX
	JNZ     orow

	// Columns: Y[i][j] = (Aᵀ r_j)[i] + b.
	MOVQ SP, R8
	MOVQ $4, CX

ocol:
	LOADK(R8, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	AT8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	VADDPS  Y15, Y0, Y0
	VADDPS  Y15, Y1, Y1
	VADDPS  Y15, Y2, Y2
	VADDPS  Y15, Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DI)(DX*1)
	VMOVUPS Y2, (DI)(DX*2)
	LEAQ    (DI)(DX*2), R9
	VMOVUPS Y3, (R9)(DX*1)
	ADDQ    $32, DI
	ADDQ    $256, R8
	DECQ    CX
	JNZ     ocol
	VZEROUPPER
	RET

// func winoOutputGradAVX2(dst *float32, stride int, dy *float32, pitch int)
// dst[ξ·stride + l] = (A dY_l Aᵀ)[ξ] for lanes l < 8, dY_l[i][j] =
// dy[i·pitch + 8j + l].
TEXT ·winoOutputGradAVX2(SB), $1024-32
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ dy+16(FP), SI
	MOVQ pitch+24(FP), DX
	SHLQ $2, DX
	// Columns: c_j[a] = (A dY[·][j])[a] at SP + 256j + 32a.
	MOVQ SP, R8
	MOVQ $4, CX

ogcol:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(DX*1), Y1
	VMOVUPS (SI)(DX*2), Y2
	LEAQ    (SI)(DX*2), R9
	VMOVUPS (R9)(DX*1), Y3
	A8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STOREK(R8, 32, Y0, Y4, Y5, Y6, Y7, Y10, Y11, Y3)
	ADDQ $32, SI
	ADDQ $256, R8
	DECQ CX
	JNZ  ogcol

	// Rows: dM[8a + b] = (A (c_0[a], …, c_3[a]))[b].
	MOVQ SP, R8
	MOVQ $8, CX

ogrow:
	VMOVUPS (R8), Y0
	VMOVUPS 256(R8), Y1
	VMOVUPS 512(R8), Y2
	VMOVUPS 768(R8), Y3
	A8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STORE8S(DI, BX, R9, Y0, Y4, Y5, Y6, Y7, Y10, Y11, Y3)
	LEAQ (R9)(BX*2), DI
	ADDQ $32, R8
	DECQ CX
	JNZ  ogrow
	VZEROUPPER
	RET

// func winoFilterAVX2(dst *float32, stride int, filt *float32)
// dst[ξ·stride + l] = (G g_l Gᵀ)[ξ] for 8 filters l, g_l[i][j] =
// filt[(5i + j)·8 + l].
TEXT ·winoFilterAVX2(SB), $1280-24
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ filt+16(FP), SI
	// Columns: t[a][j] = (G g[·][j])[a] at SP + 160a + 32j.
	MOVQ SP, R8
	MOVQ $5, CX

fcol:
	LOAD5K(SI, 160, Y0, Y1, Y2, Y3, Y4)
	GT5(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STOREK(R8, 160, Y0, Y7, Y8, Y9, Y10, Y11, Y12, Y4)
	ADDQ $32, SI
	ADDQ $32, R8
	DECQ CX
	JNZ  fcol

	// Rows: U[8a + b] = (G t[a][·])[b].
	MOVQ SP, R8
	MOVQ $8, CX

frow:
	LOAD5K(R8, 32, Y0, Y1, Y2, Y3, Y4)
	GT5(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STORE8S(DI, BX, R9, Y0, Y7, Y8, Y9, Y10, Y11, Y12, Y4)
	LEAQ (R9)(BX*2), DI
	ADDQ $160, R8
	DECQ CX
	JNZ  frow
	VZEROUPPER
	RET

// func winoFilterGradAVX2(dg *float32, du *float32, stride int)
// dg[(5i + j)·8 + l] = (Gᵀ dU_l G)[i][j] for 8 filters l, dU_l[ξ] =
// du[ξ·stride + l].
TEXT ·winoFilterGradAVX2(SB), $1280-24
	MOVQ dg+0(FP), DI
	MOVQ du+8(FP), SI
	MOVQ stride+16(FP), BX
	SHLQ $2, BX
	// Rows: t[i][a] = (Gᵀ dU[a][·])[i] = (dU G)[a][i] at SP + 256i + 32a.
	MOVQ SP, R8
	MOVQ $8, CX

fgrow:
	LOAD8S(SI, BX, R9, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	G5T(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STORE5K(R8, 256, Y0, Y1, Y2, Y3, Y7)
	LEAQ (R9)(BX*2), SI
	ADDQ $32, R8
	DECQ CX
	JNZ  fgrow

	// dg[j][i] = (Gᵀ t[i][·])[j]: row i of (dU G) is t[i][·].
	MOVQ SP, R8
	MOVQ $5, CX

fgcol:
	LOADK(R8, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	G5T(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	STORE5K(DI, 160, Y0, Y1, Y2, Y3, Y7)
	ADDQ $32, DI
	ADDQ $256, R8
	DECQ CX
	JNZ  fgcol
	VZEROUPPER
	RET
