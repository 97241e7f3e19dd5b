datafile = 'a100-to-h100.dat'
set terminal svg size 1000,700 dynamic background rgb 'white' font 'Sans,11'
set output 'a100-to-h100.svg'
set title 'a100-to-h100: what moving from DGX A100 to DGX H100 buys: the GPU (compute, HBM, NVLink) and the NIC apart' noenhanced font ',10'
set grid
set key noenhanced below vertical font ',9'
set xlabel 'gpu' noenhanced
set xtics ('a100-sxm' 0, 'h100-sxm' 1)
set offsets 0.2, 0.2, 0, 0
set ylabel 'tokens/s over the run''s first point'
plot datafile index 0 using 1:2 with linespoints lw 2 pt 7 lc 1 title 'llama2-7b, 256 GPUs, inter_node.nic_bandwidth=200Gb/s', \
     datafile index 1 using 1:2 with linespoints lw 2 pt 7 lc 2 title 'llama2-7b, 256 GPUs, inter_node.nic_bandwidth=400Gb/s'
